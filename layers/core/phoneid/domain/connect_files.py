"""Connect's CSV records: reading an input file, the authorization and row checks, and writing the
output, error and rejected files. Pure: lines in, lines out; the service streams them from and to S3.

Reading. The stdlib ``csv`` module reads the text a line at a time (UTF-8 with or without a BOM,
CRLF or LF line ends, quoted fields; a quoted field may span lines). Surrounding whitespace of every
field is dropped and the record type is read case-insensitively. Blank records (an empty line, or
only commas) are skipped. Fields past the last column of a record are ignored; missing trailing
fields are empty. Line numbers are the physical lines of the input, 1-based (the header is line 1),
counting where a record starts.

Authorization checks (``Rejection``). Any failure rejects the whole file; each has a stable code and
a message (never a field's value: the Enroll Key and the rows' data stay out of it):

- the first record must be ``H, Enroll Key, Verification Type``; the Enroll Key is checked against
  the profile's scrypt hash (``phoneid.domain.credentials.verify_secret``, constant time) before the
  type; the type must be the file name's;
- then ``D`` records, then one ``T, Number of Records`` as the last record, its count an integer
  equal to the number of ``D`` records, which must be one or more (a header alone, with or without
  a trailer, is ``NO_DETAIL_ROWS``);
- text that is not UTF-8, or holds NUL characters, is ``CONTENT_UNREADABLE``; text the csv module
  cannot read (a quote left open, a field over the csv module's limit of 128 KiB) or whose first
  record is not a Connect record at all is ``NOT_CSV``.

Row checks (``RowError``), in this order, a row getting the first code that applies: the
maker's ``ERR_MISSING_FNAME``, ``ERR_MISSING_LNAME``, ``ERR_MISSING_PHONE``; ours ``ERR_FIELD_TOO_LONG`` (a
name, Client Customer ID or Issuer ID over 128 characters, Attribute Type over 64, Attribute Value
over 256: the limits of ``/v3/verify``); the maker's ``ERR_FORMAT_PHONE`` (not ``+`` and country code, over
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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from hashlib import blake2b
from typing import Any

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

    @classmethod
    def of(cls, line: int, fields: Sequence[str]) -> DetailRow:
        values = [field.strip() for field in fields[1 : 1 + len(DETAIL_FIELDS)]]
        values += [""] * (len(DETAIL_FIELDS) - len(values))
        return cls(line, *values)

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


def _text_lines(lines: Iterable[str]) -> Iterator[str]:
    """Each line ending in exactly one LF (so quoted fields can span lines), the BOM dropped."""
    first = True
    for raw in lines:
        line = raw.rstrip("\r\n")
        if first:
            line = line.removeprefix("\ufeff")
            first = False
        if "\x00" in line:
            raise FileRejected(Rejection.CONTENT_UNREADABLE)
        yield line + "\n"


def read_records(lines: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    """(line where the record starts, fields) of each record that is not blank, read as a stream."""
    reader = csv.reader(_text_lines(lines), strict=True)
    start = 1
    try:
        for fields in reader:
            line, start = start, reader.line_num + 1
            if any(field.strip() for field in fields):
                yield line, fields
    except csv.Error:
        raise FileRejected(Rejection.NOT_CSV, line=start) from None
    except UnicodeDecodeError:
        raise FileRejected(Rejection.CONTENT_UNREADABLE) from None


class BatchFileReader:
    """Reads an input file's records in one pass, checking its structure as it goes.

    ``rows()`` yields the detail rows; it raises ``FileRejected`` as soon as a check fails (the
    trailer's, at the end). ``detail_rows`` counts the ``D`` records read so far.
    """

    def __init__(self, lines: Iterable[str], *, file: BatchFileName, enroll_key_hash: str) -> None:
        self._lines = lines
        self._file = file
        self._enroll_key_hash = enroll_key_hash
        self.detail_rows = 0

    def rows(self) -> Iterator[DetailRow]:
        records = read_records(self._lines)
        first = next(records, None)
        if first is None:
            raise FileRejected(Rejection.FILE_EMPTY)
        self._check_header(*first)
        trailer: tuple[int, int] | None = None
        for line, fields in records:
            kind = fields[0].strip().upper()
            if trailer is not None:
                raise FileRejected(Rejection.TRAILER_NOT_LAST, line=line)
            if kind == "D":
                self.detail_rows += 1
                yield DetailRow.of(line, fields)
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

    def _check_header(self, line: int, fields: list[str]) -> None:
        kind = fields[0].strip().upper()
        if kind in ("D", "T"):
            raise FileRejected(Rejection.HEADER_MISSING, line=line)
        if kind != "H":
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
