"""The records of a Connect file's text, read as a stream (docs/connect.md#reading-a-file):
as the stdlib ``csv`` module reads with ``strict=True``, from pieces of any size, in time linear in the
text's length, never holding a line whole; each record's first ``KEPT_CELLS`` cells, cut to
``MAX_CELL_CHARS``."""

from __future__ import annotations

import csv
import re
from collections.abc import Generator, Iterable, Iterator
from typing import NamedTuple

from phoneid.domain.connect.rejection import FileRejected, Rejection
from phoneid.domain.connect.rows import DETAIL_FIELDS

MAX_CELL_CHARS = 131_072  # a cell of the eight columns longer than this: its row is ERR_FIELD_TOO_LONG
MAX_RECORD_CHARS = 1_048_576  # a record longer than this (line ends in quoted cells included): the same
KEPT_CELLS = 1 + len(DETAIL_FIELDS)  # the record type and the detail columns: the cells Connect reads


class Record(NamedTuple):
    """A record that is not blank: the line it starts on, its first ``KEPT_CELLS`` cells (a longer
    cell cut to ``MAX_CELL_CHARS``), and whether a cell or the record was over its limit."""

    line: int
    fields: list[str]
    too_long: bool = False


_FIELD_START, _UNQUOTED, _QUOTED, _QUOTE_IN_QUOTED = range(4)
_UNQUOTED_END = re.compile("[,\r\n\x00]")
_QUOTED_END = re.compile('["\x00]')  # line ends inside quotes are part of the cell
_LINE_END = re.compile("\r\n|\r|\n")
_NOT_SPACE = re.compile(r"\S")  # what str.strip() keeps (the same Unicode whitespace)
# Whole fields past the kept cells, each with its comma, skipped in one go: unquoted, or quoted
# without a line end inside (possessive: no backtracking, whatever the line's length).
_SKIPPED_FIELDS = re.compile('(?:(?:"(?:[^"\r\n\x00]|"")*+"|[^,"\r\n\x00][^,\r\n\x00]*+)?+,)*+')


class _OneLine:
    """The csv reader's input: one line at a time (it asks for no second one: a record that would
    go on to the next line is an error, and the scanner reads that record instead)."""

    line: str | None = None

    def __iter__(self) -> _OneLine:
        return self

    def __next__(self) -> str:
        line, self.line = self.line, None
        if line is None:
            raise StopIteration
        return line


def _start_of_line(text: str, pos: int, index: int) -> int:
    """Where line ``index`` (0-based) of the text from ``pos`` begins."""
    for number, found in enumerate(_LINE_END.finditer(text, pos), start=1):
        if number == index:
            return found.end()
    return pos


class _RecordScanner:
    """The records of a text, fed in pieces of any size: a state machine that reads each character
    once (str and re methods in C doing the reading) and keeps no more than the cells it returns.

    It reads as the stdlib ``csv`` reader does with ``strict=True`` (a ``"`` opens a quoted field only
    at a field's start, ``""`` inside one is a quote, a line end inside one is ``\n``, anything but
    ``,`` or a line end after its closing quote is an error), without its limit of one cell."""

    def __init__(self) -> None:
        self.line = 1  # the physical line at the reading position
        self._pending_cr = False  # the last piece ended with CR: an LF starting the next is its pair
        self._first = True
        self._in_record = False
        self._state = _FIELD_START
        self._start = 1
        self._fields: list[str] = []
        self._field_no = 0
        self._cell: list[str] = []
        self._cell_len = 0
        self._record_len = 0
        self._too_long = False
        self._content = False  # a cell read holds more than whitespace
        self._one_line = _OneLine()
        self._csv = csv.reader(self._one_line, strict=True)

    def feed(self, text: str) -> Iterator[Record]:
        pos = 0
        if self._first and text:
            self._first = False
            pos = 1 if text.startswith("\ufeff") else 0
        if self._pending_cr and text:
            self._pending_cr = False
            if text.startswith("\n"):
                pos += 1
        end = len(text)
        while pos < end:
            if not self._in_record:
                pos = yield from self._whole_lines(text, pos)
                if pos >= end:
                    break
            pos, record = self._scan(text, pos)
            if record is not None:
                yield record

    def finish(self) -> Iterator[Record]:
        """The last record, when the text does not end with a line end."""
        if not self._in_record:
            return
        if self._state == _QUOTED:
            raise FileRejected(Rejection.NOT_CSV, line=self._start)
        record = self._end_record()
        if record is not None:
            yield record

    # --- lines without quotes: split whole ------------------------------------------------------

    def _whole_lines(self, text: str, pos: int) -> Generator[Record, None, int]:
        """The complete lines from ``pos`` that hold a record each (no quoted cell going on to the next
        line), up to the first that does not or holds a NUL; returns where the scanner takes over.
        A line without a quote is split as it is; one with quotes is read by the ``csv`` module."""
        stop = max(text.rfind("\n", pos), text.rfind("\r", pos)) + 1  # past the last line end
        nul = text.find("\x00", pos, stop)
        if nul >= 0:  # back to the start of its line
            stop = max(text.rfind("\n", pos, nul), text.rfind("\r", pos, nul)) + 1
        if stop <= pos:
            return pos
        lines = _LINE_END.split(text[pos:stop])
        lines.pop()  # the block ends with a line end
        first_line = self.line
        for index, each in enumerate(lines):
            if '"' in each:
                self._one_line.line = each
                try:
                    cells = next(self._csv)[:KEPT_CELLS]
                except (csv.Error, StopIteration):  # a quoted cell goes on, a quote error, a long cell
                    self.line = first_line + index
                    return _start_of_line(text, pos, index)
            else:
                cells = each.split(",", KEPT_CELLS)[:KEPT_CELLS]
            if not any(cell.strip() for cell in cells):
                continue
            too_long = len(each) > MAX_CELL_CHARS and (
                len(each) > MAX_RECORD_CHARS or any(len(cell) > MAX_CELL_CHARS for cell in cells)
            )
            if too_long:
                cells = [cell[:MAX_CELL_CHARS] for cell in cells]
            yield Record(first_line + index, cells, too_long)
        self.line = first_line + len(lines)
        if stop == len(text) and text[stop - 1] == "\r":
            self._pending_cr = True
        return stop

    # --- everything else: one field (or one run of skipped fields) at a time -----------------------

    def _scan(self, text: str, pos: int) -> tuple[int, Record | None]:
        """Read from ``pos`` until the record ends (its end, the record) or the text does."""
        if not self._in_record:
            self._in_record = True
            self._start = self.line
            self._state = _FIELD_START
        began, end = pos, len(text)
        while pos < end:
            state = self._state
            if state == _FIELD_START:
                if self._field_no >= KEPT_CELLS:
                    pos = _SKIPPED_FIELDS.match(text, pos).end()  # type: ignore[union-attr]
                    if pos >= end:
                        break
                if text[pos] == '"':
                    self._state = _QUOTED
                    pos += 1
                    continue
                self._state = state = _UNQUOTED
            if state == _UNQUOTED:
                found = _UNQUOTED_END.search(text, pos)
                stop = found.start() if found else end
                self._take(text, pos, stop)
                if found is None:
                    pos = end
                    break
                char = text[stop]
                if char == ",":
                    self._end_field()
                    self._state = _FIELD_START
                    pos = stop + 1
                    continue
                if char == "\x00":
                    raise FileRejected(Rejection.CONTENT_UNREADABLE)
                pos = self._line_end(text, stop)
                return pos, self._record_ends(pos - began)
            if state == _QUOTED:
                found = _QUOTED_END.search(text, pos)
                stop = found.start() if found else end
                self._take_quoted(text, pos, stop)
                if found is None:
                    pos = end
                    break
                if text[stop] == "\x00":
                    raise FileRejected(Rejection.CONTENT_UNREADABLE)
                self._state = _QUOTE_IN_QUOTED
                pos = stop + 1
                continue
            char = text[pos]  # _QUOTE_IN_QUOTED: the quote was a closing one, or half of ""
            if char == '"':
                self._take(text, pos, pos + 1)
                self._state = _QUOTED
                pos += 1
            elif char == ",":
                self._end_field()
                self._state = _FIELD_START
                pos += 1
            elif char in "\r\n":
                pos = self._line_end(text, pos)
                return pos, self._record_ends(pos - began)
            elif char == "\x00":
                raise FileRejected(Rejection.CONTENT_UNREADABLE)
            else:
                raise FileRejected(Rejection.NOT_CSV, line=self._start)
        self._grow(pos - began)
        return pos, None

    def _line_end(self, text: str, pos: int) -> int:
        """Past the line end at ``pos`` (CRLF is one), counting the line."""
        self.line += 1
        if text[pos] == "\r":
            if pos + 1 == len(text):
                self._pending_cr = True
            elif text[pos + 1] == "\n":
                return pos + 2
        return pos + 1

    def _take(self, text: str, start: int, stop: int) -> None:
        """Characters of the current cell; kept while the cell is one Connect reads and within its limit."""
        if stop <= start or self._field_no >= KEPT_CELLS:
            return
        if not self._content and _NOT_SPACE.search(text, start, stop):
            self._content = True
        room = MAX_CELL_CHARS - self._cell_len
        if room > 0:
            self._cell.append(text[start : min(stop, start + room)])
        self._cell_len += stop - start

    def _take_quoted(self, text: str, start: int, stop: int) -> None:
        """Characters inside quotes: line ends are counted and read as LF."""
        if stop <= start:
            return
        ends = text.count("\n", start, stop) + text.count("\r", start, stop) - text.count("\r\n", start, stop)
        if not ends:
            self._take(text, start, stop)
            return
        self.line += ends
        if text[stop - 1] == "\r" and stop == len(text):
            self._pending_cr = True
        if self._field_no < KEPT_CELLS:
            normal = _LINE_END.sub("\n", text[start:stop])
            self._take(normal, 0, len(normal))

    def _end_field(self) -> None:
        if self._field_no < KEPT_CELLS:
            self._fields.append("".join(self._cell))
            if self._cell_len > MAX_CELL_CHARS:
                self._too_long = True
            self._cell = []
            self._cell_len = 0
        self._field_no += 1

    def _grow(self, chars: int) -> None:
        self._record_len += chars
        if self._record_len > MAX_RECORD_CHARS:
            self._too_long = True

    def _record_ends(self, chars: int) -> Record | None:
        self._grow(chars)
        return self._end_record()

    def _end_record(self) -> Record | None:
        self._end_field()
        fields, too_long, start = self._fields, self._too_long, self._start
        self._in_record = False
        content, self._content = self._content, False
        self._fields, self._field_no, self._record_len, self._too_long = [], 0, 0, False
        if not content:  # blank
            return None
        return Record(start, fields, too_long)


def read_records(text: Iterable[str]) -> Iterator[Record]:
    """Each record that is not blank (none of its first ``KEPT_CELLS`` cells holds more than
    whitespace), read as a stream from pieces of text of any size (lines, or blocks of a file)."""
    scanner = _RecordScanner()
    try:
        for piece in text:
            yield from scanner.feed(piece)
        yield from scanner.finish()
    except UnicodeDecodeError:
        raise FileRejected(Rejection.CONTENT_UNREADABLE) from None
