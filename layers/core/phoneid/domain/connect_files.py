"""Connect's CSV records: reading an input file, the authorization and row checks, and writing the
output, error and rejected files. Pure: text in, lines out; the service streams them from and to S3.

Reading. ``read_records`` reads the text as the stdlib ``csv`` module does with ``strict=True`` (UTF-8
with or without a BOM, CRLF, LF or CR line ends, quoted fields; a quoted field may span lines),
from pieces of any size, in time linear in the text's length and with bounded memory: a line is
never held whole. Lines without a quote are split as they are, lines with quotes are read by the
``csv`` module, and what neither can do alone (a record going on past its line or its piece) by a
small state machine whose searches run in C. Surrounding whitespace of every field is dropped and
the record type is read case-insensitively. Only the first eight cells (``KEPT_CELLS``: the record
type and the seven detail columns) are kept; fields past them are ignored, and missing trailing
fields are empty. A record whose eight cells are blank is skipped (an empty line, only commas).
Line numbers are the physical lines of the input, 1-based (the header is line 1), counting where a
record starts.

Limits. A cell of the eight columns over ``MAX_CELL_CHARS`` (131,072 characters, the csv module's
own limit, so every file read before reads the same) is kept cut to that length, and a record over
``MAX_RECORD_CHARS`` (1,048,576 characters, line ends in quoted cells included; a valid row has
about 900) is read to its end without keeping more: the record is ``too_long``. A detail row that is
too long is that row's ``ERR_FIELD_TOO_LONG`` and the file goes on; a header or trailer that is too
long rejects the file as ``NOT_CSV``. What one record can hold in memory is eight cut cells.

Authorization checks (``Rejection``). Any failure rejects the whole file; each has a stable code and
a message (never a field's value: the Enroll Key and the rows' data stay out of it):

- the first record must be ``H, Enroll Key, Verification Type``; the Enroll Key is checked against
  the profile's scrypt hash (``phoneid.domain.credentials.verify_secret``, constant time) before the
  type; the type must be the file name's;
- then ``D`` records, then one ``T, Number of Records`` as the last record, its count an integer
  equal to the number of ``D`` records, which must be one or more (a header alone, with or without
  a trailer, is ``NO_DETAIL_ROWS``);
- text that is not UTF-8, or holds NUL characters, is ``CONTENT_UNREADABLE``; text that is not
  CSV (a quote left open at the end, a character other than a comma or a line end after a closing
  quote), whose first record is not a Connect record at all, or whose header or trailer is too
  long is ``NOT_CSV``.

Row checks (``RowError``), in this order, a row getting the first code that applies: ours
``ERR_FIELD_TOO_LONG`` for a row over the reader's limits (its cells are cut: nothing else could be
told); the maker's ``ERR_MISSING_FNAME``, ``ERR_MISSING_LNAME``, ``ERR_MISSING_PHONE``; ours
``ERR_FIELD_TOO_LONG`` (a name, Client Customer ID or Issuer ID over 128 characters, Attribute
Type over 64, Attribute Value over 256: the limits of ``/v3/verify``); the maker's
``ERR_FORMAT_PHONE`` (not ``+`` and country code, over
32 characters, or not a valid number of its country) and ``ERR_PHONE_COUNTRY_NOTSUPPORTED`` (in a
``US`` file a number without country code 1, i.e. outside the North American Numbering Plan — the
US, Canada and the NANP countries and territories, all served by the US region; in an ``INTL`` file
a number with country code 1; in either, a country this stack's region does not serve or the
client may not use); ours ``ERR_MISSING_ATTRIBUTE`` (a partner row — one with any of Attribute Type,
Issuer ID, Attribute Value — without all three); then the maker's
``ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED``.

Duplicates: a valid row is a duplicate of an earlier valid row with the same number (E.164) and the
same first and last name (compared case-, accent- and punctuation-insensitively, as identity
matching does), or with the same non-empty Client Customer ID (the identity's place in Identity
Manager). The first is kept; later ones go to the error file. ``SeenKeys`` remembers 64-bit hashes
of those keys in an open-addressing table of 8-byte slots kept at most half full: 16 to 32 bytes a
key, so an 800,000-row file with Client Customer IDs (1.6 million keys) needs a 32 MiB table (48 MiB
while it doubles). Two different keys colliding in 64 bits (a false duplicate) has odds of about 1 in
14 million for such a file.

Writing. Output, error and rejected files are written with ``csv.writer`` (minimal quoting, CRLF
line ends as RFC 4180 has them). Formula injection: a cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is written with a leading apostrophe (``'=HYPERLINK(...)``), so a
spreadsheet shows it as text instead of running it; a cell made only of digits, spaces, parentheses,
dots and hyphens after an optional sign (a phone number in ``+`` form, a negative number) is left as
it is, since nothing in it can call a function or another program.
Output: ``H``; one ``D`` per verified row with the output columns (``OUTPUT_COLUMNS``); ``T`` with the
count. The phone number, names and ids are echoed as the input had them. Assurance Level Reason
Codes are the assurance reasons joined with ``;``; GFP Authentication Result and GFP Risk Result are
``pass``, or ``fail:`` and the failing reason codes joined with ``;`` (``fail:9135;9137``), or empty when
the policy did not evaluate that category. A row the verification could not run for has its API
error code (``8010``) and message in Error and Error Message and nothing in the result columns.
Errors: ``H, Verification Type``; ``D`` per row with ``ERROR_COLUMNS``, Error Attribution being the
row's code; ``T`` with the count. Rejected: ``File``, ``Reason Code``, ``Reason`` (and ``Line`` when a
line is to blame) as name-value rows.
"""

from __future__ import annotations

import csv
import io
import re
from array import array
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from hashlib import blake2b
from typing import Any, NamedTuple

from phoneid.domain.connect import BatchFileName, FileRegion
from phoneid.domain.credentials import verify_secret
from phoneid.domain.evaluation import Category, Evaluation
from phoneid.domain.identity import fold
from phoneid.domain.phone import InvalidPhoneNumber, PhoneNumber, Region, parse_phone

# --- authorization checks -------------------------------------------------------------------------


class Rejection(StrEnum):
    """Why a whole file was rejected. Codes are stable: they appear in the rejected file and emails."""

    KEY_NOT_IN_UPLOAD = "KEY_NOT_IN_UPLOAD"
    CLIENT_UNKNOWN = "CLIENT_UNKNOWN"
    CLIENT_DISABLED = "CLIENT_DISABLED"
    FILE_NAME_INVALID = "FILE_NAME_INVALID"
    CLIENT_MISMATCH = "CLIENT_MISMATCH"
    TYPE_NOT_ALLOWED = "TYPE_NOT_ALLOWED"
    FILE_EMPTY = "FILE_EMPTY"
    CONTENT_UNREADABLE = "CONTENT_UNREADABLE"
    NOT_CSV = "NOT_CSV"
    HEADER_MISSING = "HEADER_MISSING"
    ENROLL_KEY_INVALID = "ENROLL_KEY_INVALID"
    TYPE_MISMATCH = "TYPE_MISMATCH"
    HEADER_NOT_FIRST = "HEADER_NOT_FIRST"
    RECORD_TYPE_UNKNOWN = "RECORD_TYPE_UNKNOWN"
    TRAILER_INVALID = "TRAILER_INVALID"
    TRAILER_NOT_LAST = "TRAILER_NOT_LAST"
    TRAILER_MISSING = "TRAILER_MISSING"
    TRAILER_COUNT_MISMATCH = "TRAILER_COUNT_MISMATCH"
    NO_DETAIL_ROWS = "NO_DETAIL_ROWS"
    PROCESSING_FAILED = "PROCESSING_FAILED"  # a workflow step failed: the batch ended failed

    @property
    def message(self) -> str:
        return _REJECTION_MESSAGES[self]


_REJECTION_MESSAGES: Mapping[Rejection, str] = {
    Rejection.KEY_NOT_IN_UPLOAD: "The file is not directly in a client's upload directory.",
    Rejection.CLIENT_UNKNOWN: "No Connect client is onboarded under this directory.",
    Rejection.CLIENT_DISABLED: "The client's API credentials are disabled or removed.",
    Rejection.FILE_NAME_INVALID: (
        "The file name must be {client_name}_{US|INTL}_{verifiedUser|humanAssurance}_YYYYMMDDHHMMSS.csv "
        "with a real date and time."
    ),
    Rejection.CLIENT_MISMATCH: "The client name in the file name is not the client whose directory holds it.",
    Rejection.TYPE_NOT_ALLOWED: "The verification type in the file name is not enabled for this client.",
    Rejection.FILE_EMPTY: "The file is empty.",
    Rejection.CONTENT_UNREADABLE: "The file is not UTF-8 text (binary content or another encoding).",
    Rejection.NOT_CSV: "The file is not a Connect CSV file (H, D and T records).",
    Rejection.HEADER_MISSING: "The first record must be the header: H, Enroll Key, Verification Type.",
    Rejection.ENROLL_KEY_INVALID: "The Enroll Key in the header record is missing or wrong.",
    Rejection.TYPE_MISMATCH: "The header's Verification Type differs from the file name's.",
    Rejection.HEADER_NOT_FIRST: "A header record appears after the first record.",
    Rejection.RECORD_TYPE_UNKNOWN: "A record's type is not H, D or T.",
    Rejection.TRAILER_INVALID: "The trailer's Number of Records is not a whole number.",
    Rejection.TRAILER_NOT_LAST: "Records follow the trailer record.",
    Rejection.TRAILER_MISSING: "The last record must be the trailer: T, Number of Records.",
    Rejection.TRAILER_COUNT_MISMATCH: "The trailer's Number of Records differs from the detail records.",
    Rejection.NO_DETAIL_ROWS: "The file has no detail (D) records.",
    Rejection.PROCESSING_FAILED: (
        "The file could not be processed to its end and no results were delivered for it; "
        "the operator has been told. Upload it again."
    ),
}


class FileRejected(Exception):
    """An authorization check failed: the whole file is rejected."""

    def __init__(self, reason: Rejection, detail: str | None = None, line: int | None = None) -> None:
        self.reason = reason
        self.detail = detail
        self.line = line
        super().__init__(self.message)

    @property
    def message(self) -> str:
        text = self.reason.message
        if self.detail:
            text = f"{text} {self.detail}"
        if self.line is not None:
            text = f"{text} (line {self.line})"
        return text


# --- reading --------------------------------------------------------------------------------------

DETAIL_FIELDS = (
    "phone_number",
    "first_name",
    "last_name",
    "client_customer_id",
    "attribute_type",
    "issuer_id",
    "attribute_value",
)
_JSON_NAMES = {
    "phone_number": "phone",
    "first_name": "firstName",
    "last_name": "lastName",
    "client_customer_id": "clientCustomerId",
    "attribute_type": "attributeType",
    "issuer_id": "issuerId",
    "attribute_value": "attributeValue",
}


@dataclass(frozen=True)
class DetailRow:
    """A ``D`` record as read, every field stripped ("" when absent)."""

    line: int
    phone_number: str = ""
    first_name: str = ""
    last_name: str = ""
    client_customer_id: str = ""
    attribute_type: str = ""
    issuer_id: str = ""
    attribute_value: str = ""
    too_long: bool = field(default=False, kw_only=True)  # over the reader's limits: cells cut short

    @classmethod
    def of(cls, line: int, fields: Sequence[str], *, too_long: bool = False) -> DetailRow:
        values = [field.strip() for field in fields[1 : 1 + len(DETAIL_FIELDS)]]
        values += [""] * (len(DETAIL_FIELDS) - len(values))
        return cls(line, *values, too_long=too_long)

    @property
    def partner(self) -> bool:
        return bool(self.attribute_type or self.issuer_id or self.attribute_value)

    def to_json(self) -> dict[str, Any]:
        """One line of a chunk object: the line number and the fields that are not empty."""
        data: dict[str, Any] = {"line": self.line}
        for name in DETAIL_FIELDS:
            value = getattr(self, name)
            if value:
                data[_JSON_NAMES[name]] = value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DetailRow:
        return cls(int(data["line"]), *(str(data.get(_JSON_NAMES[name], "")) for name in DETAIL_FIELDS))


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


class BatchFileReader:
    """Reads an input file's records in one pass, checking its structure as it goes.

    ``rows()`` yields the detail rows; it raises ``FileRejected`` as soon as a check fails (the
    trailer's, at the end). ``detail_rows`` counts the ``D`` records read so far.
    """

    def __init__(self, text: Iterable[str], *, file: BatchFileName, enroll_key_hash: str) -> None:
        self._text = text
        self._file = file
        self._enroll_key_hash = enroll_key_hash
        self.detail_rows = 0

    def rows(self) -> Iterator[DetailRow]:
        records = read_records(self._text)
        first = next(records, None)
        if first is None:
            raise FileRejected(Rejection.FILE_EMPTY)
        self._check_header(first)
        trailer: tuple[int, int] | None = None
        for line, fields, too_long in records:
            kind = fields[0].strip().upper()
            if trailer is not None:
                raise FileRejected(Rejection.TRAILER_NOT_LAST, line=line)
            if kind == "D":
                self.detail_rows += 1
                yield DetailRow.of(line, fields, too_long=too_long)
            elif too_long and kind in ("H", "T"):  # a cell cut short: nothing in it can be trusted
                raise FileRejected(Rejection.NOT_CSV, line=line)
            elif kind == "T":
                trailer = (line, _trailer_count(line, fields))
            elif kind == "H":
                raise FileRejected(Rejection.HEADER_NOT_FIRST, line=line)
            else:
                raise FileRejected(Rejection.RECORD_TYPE_UNKNOWN, line=line)
        if self.detail_rows == 0:
            raise FileRejected(Rejection.NO_DETAIL_ROWS)
        if trailer is None:
            raise FileRejected(Rejection.TRAILER_MISSING)
        line, count = trailer
        if count != self.detail_rows:
            raise FileRejected(
                Rejection.TRAILER_COUNT_MISMATCH,
                f"The trailer says {count}; the file has {self.detail_rows}.",
                line=line,
            )

    def _check_header(self, record: Record) -> None:
        line, fields = record.line, record.fields
        kind = fields[0].strip().upper()
        if kind in ("D", "T"):
            raise FileRejected(Rejection.HEADER_MISSING, line=line)
        if kind != "H" or record.too_long:
            raise FileRejected(Rejection.NOT_CSV, line=line)
        key = fields[1].strip() if len(fields) > 1 else ""
        if not _enroll_key_matches(key, self._enroll_key_hash):
            raise FileRejected(Rejection.ENROLL_KEY_INVALID, line=line)
        verification_type = fields[2].strip() if len(fields) > 2 else ""
        if verification_type != self._file.verification_type.value:
            raise FileRejected(Rejection.TYPE_MISMATCH, line=line)


def _enroll_key_matches(key: str, stored: str) -> bool:
    """Constant time against the scrypt hash; an empty key still costs one scrypt."""
    try:
        return verify_secret(key, stored) and bool(key)
    except ValueError:  # a malformed stored hash matches nothing
        return False


def _trailer_count(line: int, fields: list[str]) -> int:
    text = fields[1].strip() if len(fields) > 1 else ""
    if not text.isascii() or not text.isdigit():
        raise FileRejected(Rejection.TRAILER_INVALID, line=line)
    return int(text)


# --- row checks -----------------------------------------------------------------------------------


class RowError(StrEnum):
    """Why a detail row went to the error file (its Error Attribution)."""

    ERR_MISSING_FNAME = "ERR_MISSING_FNAME"
    ERR_MISSING_LNAME = "ERR_MISSING_LNAME"
    ERR_MISSING_PHONE = "ERR_MISSING_PHONE"
    ERR_FIELD_TOO_LONG = "ERR_FIELD_TOO_LONG"  # ours
    ERR_FORMAT_PHONE = "ERR_FORMAT_PHONE"
    ERR_PHONE_COUNTRY_NOTSUPPORTED = "ERR_PHONE_COUNTRY_NOTSUPPORTED"
    ERR_MISSING_ATTRIBUTE = "ERR_MISSING_ATTRIBUTE"  # ours: a partner row without all three
    ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED = "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"
    ERR_PROCESSING_FAILED = "ERR_PROCESSING_FAILED"  # ours: the row's chunk never produced results


_LIMITS: Mapping[str, int] = {
    "first_name": 128,
    "last_name": 128,
    "client_customer_id": 128,
    "attribute_type": 64,
    "issuer_id": 128,
    "attribute_value": 256,
}
_MAX_PHONE_LENGTH = 32
_NANP_PREFIX = "+1"


class SeenKeys:
    """A set of 64-bit key hashes in one flat array: 16-32 bytes a key instead of a Python set's ~100."""

    _INITIAL_SLOTS = 1 << 12

    def __init__(self) -> None:
        self._slots = array("Q", bytes(8 * self._INITIAL_SLOTS))
        self._mask = self._INITIAL_SLOTS - 1
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @property
    def table_bytes(self) -> int:
        return len(self._slots) * self._slots.itemsize

    @staticmethod
    def _hash(key: str) -> int:
        value = int.from_bytes(blake2b(key.encode(), digest_size=8).digest(), "little")
        return value or 1  # 0 marks an empty slot

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        value = self._hash(key)
        slots, index = self._slots, value & self._mask
        while slots[index]:
            if slots[index] == value:
                return True
            index = (index + 1) & self._mask
        return False

    def add(self, key: str) -> None:
        self._insert(self._hash(key))
        if self._count * 2 > len(self._slots):
            self._grow()

    def _insert(self, value: int) -> None:
        slots, index = self._slots, value & self._mask
        while slots[index]:
            if slots[index] == value:
                return
            index = (index + 1) & self._mask
        slots[index] = value
        self._count += 1

    def _grow(self) -> None:
        old = self._slots
        self._slots = array("Q", bytes(16 * len(old)))
        self._mask = len(self._slots) - 1
        self._count = 0
        for value in old:
            if value:
                self._insert(value)


class RowChecks:
    """The row checks of one file, in input order (it remembers the valid rows' duplicate keys)."""

    def __init__(
        self,
        file_region: FileRegion,
        stack_region: Region,
        may_use_country: Callable[[str], bool] | None = None,
    ) -> None:
        self._file_region = file_region
        self._stack_region = stack_region
        self._may_use_country = may_use_country
        self.seen = SeenKeys()

    def check(self, row: DetailRow) -> RowError | None:
        """The row's error, or None when it is valid (and from now on the original of its keys)."""
        checked = self._fields(row)
        if isinstance(checked, RowError):
            return checked
        keys = [f"p\x1f{checked.e164}\x1f{fold(row.first_name)}\x1f{fold(row.last_name)}"]
        if row.client_customer_id:
            keys.append(f"c\x1f{row.client_customer_id}")
        if any(key in self.seen for key in keys):
            return RowError.ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED
        for key in keys:
            self.seen.add(key)
        return None

    def _fields(self, row: DetailRow) -> RowError | PhoneNumber:
        if row.too_long:  # its cells were cut short: no other check could be trusted
            return RowError.ERR_FIELD_TOO_LONG
        if not row.first_name:
            return RowError.ERR_MISSING_FNAME
        if not row.last_name:
            return RowError.ERR_MISSING_LNAME
        if not row.phone_number:
            return RowError.ERR_MISSING_PHONE
        if any(len(getattr(row, name)) > limit for name, limit in _LIMITS.items()):
            return RowError.ERR_FIELD_TOO_LONG
        if len(row.phone_number) > _MAX_PHONE_LENGTH or not row.phone_number.startswith("+"):
            return RowError.ERR_FORMAT_PHONE
        try:
            phone = parse_phone(row.phone_number, self._stack_region)
        except InvalidPhoneNumber:
            return RowError.ERR_FORMAT_PHONE
        nanp = phone.e164.startswith(_NANP_PREFIX)
        if (
            nanp != (self._file_region == "US")
            or phone.region != self._stack_region
            or (self._may_use_country is not None and not self._may_use_country(phone.country))
        ):
            return RowError.ERR_PHONE_COUNTRY_NOTSUPPORTED
        if row.partner and not (row.attribute_type and row.issuer_id and row.attribute_value):
            return RowError.ERR_MISSING_ATTRIBUTE
        return phone


# --- writing --------------------------------------------------------------------------------------

OUTPUT_COLUMNS = (
    "Record Type",
    "Phone Number",
    "First Name",
    "Last Name",
    "Client Customer ID",
    "Attribute Type",
    "Issuer ID",
    "Attribute Value",
    "Assurance Level",
    "Assurance Level Reason Codes",
    "Service Phone Alias",
    "ServiceID",
    "Error",
    "Error Message",
    "GFP Authentication Result",
    "GFP Risk Result",
)
ERROR_COLUMNS = (
    "Record Type",
    "Phone Number",
    "First Name",
    "Last Name",
    "Client Customer ID",
    "Error Attribution",
)

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?[0-9 ().-]+")


def neutralise(cell: str) -> str:
    """A cell a spreadsheet will not run as a formula (see the module's notes)."""
    if cell.startswith(_FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


class CsvLines:
    """CSV lines (CRLF-terminated) of neutralised cells, one at a time, with one reusable buffer."""

    def __init__(self) -> None:
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, lineterminator="\r\n")

    def line(self, cells: Iterable[str]) -> str:
        self._buffer.seek(0)
        self._buffer.truncate()
        self._writer.writerow([neutralise(cell) for cell in cells])
        return self._buffer.getvalue()


def gfp_result(evaluation: Evaluation, category: Category) -> str:
    """``pass``, ``fail:9135;9137``, or "" when the policy did not evaluate the category."""
    if category not in evaluation.results:
        return ""
    codes = evaluation.results[category]
    return "fail:" + ";".join(str(code) for code in codes) if codes else "pass"


@dataclass(frozen=True)
class RowOutcome:
    """What verifying one row gave: its output columns, and what the statistics count."""

    line: int
    cells: tuple[str, ...]  # OUTPUT_COLUMNS
    passed: bool = False
    enrolled: bool = False
    reasons: tuple[int, ...] = ()  # evaluation codes of a row that did not pass
    error: str | None = None  # the API error code when the verification could not run

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"line": self.line, "cells": list(self.cells)}
        if self.passed:
            data["passed"] = True
        if self.enrolled:
            data["enrolled"] = True
        if self.reasons:
            data["reasons"] = list(self.reasons)
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RowOutcome:
        return cls(
            line=int(data["line"]),
            cells=tuple(str(cell) for cell in data["cells"]),
            passed=bool(data.get("passed", False)),
            enrolled=bool(data.get("enrolled", False)),
            reasons=tuple(int(code) for code in data.get("reasons", ())),
            error=str(data["error"]) if data.get("error") is not None else None,
        )


def _echo(row: DetailRow) -> list[str]:
    return [
        "D",
        row.phone_number,
        row.first_name,
        row.last_name,
        row.client_customer_id,
        row.attribute_type,
        row.issuer_id,
        row.attribute_value,
    ]


def verified_outcome(
    row: DetailRow,
    *,
    passed: bool,
    evaluation: Evaluation,
    assurance_level: str,
    assurance_reasons: Sequence[str],
    phone_alias: str,
    service_id: str | None,
) -> RowOutcome:
    cells = [
        *_echo(row),
        assurance_level,
        ";".join(assurance_reasons),
        phone_alias,
        service_id or "",
        "",
        "",
        gfp_result(evaluation, Category.AUTHENTICATION),
        gfp_result(evaluation, Category.RISK),
    ]
    return RowOutcome(
        line=row.line,
        cells=tuple(cells),
        passed=passed,
        enrolled=service_id is not None,
        reasons=() if passed else tuple(sorted(evaluation.codes)),
    )


def error_outcome(row: DetailRow, code: str, message: str) -> RowOutcome:
    """A row the verification could not run for: its error in the output, the result columns empty."""
    cells = [*_echo(row), "", "", "", "", code, message, "", ""]
    return RowOutcome(line=row.line, cells=tuple(cells), error=code)


def header_record() -> list[str]:
    return ["H"]


def error_header_record(verification_type: str) -> list[str]:
    return ["H", verification_type]


def trailer_record(count: int) -> list[str]:
    return ["T", str(count)]


def error_record(row: DetailRow, code: str) -> list[str]:
    return ["D", row.phone_number, row.first_name, row.last_name, row.client_customer_id, code]


def rejected_file(file_name: str, rejected: FileRejected) -> str:
    """The short explanation written beside a rejected file, as name-value CSV rows."""
    lines = CsvLines()
    records = [
        ["File", file_name],
        ["Reason Code", rejected.reason.value],
        ["Reason", rejected.message],
    ]
    if rejected.line is not None:
        records.append(["Line", str(rejected.line)])
    return "".join(lines.line(record) for record in records)
