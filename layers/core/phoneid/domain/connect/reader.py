"""An input file read in one pass: its records in order, the authorization checks of its header
and trailer as it goes (docs/connect.md#authorization-checks), its detail rows yielded."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from phoneid.domain.connect.names import BatchFileName
from phoneid.domain.connect.records import Record, read_records
from phoneid.domain.connect.rejection import FileRejected, Rejection
from phoneid.domain.connect.rows import DetailRow
from phoneid.domain.credentials import verify_secret


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
        trailer: tuple[int, str] | None = None
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
        if count != str(self.detail_rows):
            said = count if len(count) <= _SHOWN_DIGITS else f"a number of {len(count)} digits"
            raise FileRejected(
                Rejection.TRAILER_COUNT_MISMATCH,
                f"The trailer says {said}; the file has {self.detail_rows}.",
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


# A count longer than this is described, not repeated, in the rejection's message.
_SHOWN_DIGITS = 20


def _trailer_count(line: int, fields: list[str]) -> str:
    """The trailer's Number of Records in decimal digits, without leading zeros. Compared as text,
    never ``int()``: past 4,300 digits Python's ``int()`` raises ``ValueError``, which ended the batch
    ``failed`` where the count is simply not the file's."""
    text = fields[1].strip() if len(fields) > 1 else ""
    if not text.isascii() or not text.isdigit():
        raise FileRejected(Rejection.TRAILER_INVALID, line=line)
    return text.lstrip("0") or "0"
