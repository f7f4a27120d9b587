"""Why a whole file is rejected: the authorization checks' stable codes and messages (never a
field's value: the Enroll Key and the rows' data stay out of them; docs/connect.md#rejected-files)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


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
