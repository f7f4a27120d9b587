"""Connect: batch verification files — names, keys, batch states, statistics and step errors.

The CSV records themselves (reading, the row checks, the output, error and rejected files) are in
``phoneid.domain.connect_files``. Everything here is pure: no I/O.

Client name (the file-name prefix, the SFTP user and the S3 prefix ``clients/{name}/``): 2 to 40
characters of lowercase ASCII letters, digits and hyphens, starting with a letter and ending with a
letter or digit (``^[a-z][a-z0-9-]{0,38}[a-z0-9]$``). No underscore (it separates the file name's
parts), no dot or slash (it is a path segment), no capitals (S3 keys and SFTP paths are
case-sensitive; one spelling per client). AWS Transfer Family user names need 3 characters or more:
onboarding for AWS refuses two-character names (``valid_client_name(name, transfer_user=True)``).

File name: ``{client_name}_{region}_{verification_type}_YYYYMMDDHHMMSS.csv`` exactly: region ``US``
or ``INTL`` (capitals), type ``verifiedUser`` or ``humanAssurance`` (as spelled), a timestamp that is
a real date and time (any year 2000-9999, not checked against the clock), and the lowercase
``.csv`` extension. Anything else is rejected as ``FILE_NAME_INVALID``.

Batch id: the first 32 hex characters of sha256("{key}\n{versionId or etag}"): one S3 object
version is one batch, so a redelivered event finds its batch already claimed.

Step errors keep stable class names: the state machine's ``Retry``/``Catch`` match on them
(``ChunkThrottled`` is retried with backoff; ``BatchCountMismatch`` fails the execution loudly).
A verification counts as throttled (``is_throttling``) when it failed with an exception whose chain
(``__cause__``/``__context__``) holds an AWS provider error with a throttling error code (botocore's
standard-retry list: ``ThrottlingException``, ``ProvisionedThroughputExceededException``,
``TooManyRequestsException``, ``SlowDown``, ...) or HTTP status 429, or any exception that sets
``throttled = True`` (an adapter's way to say so without a provider error). In practice that is a
``SignalSourceError`` or an ``InternalError`` (8000) raised by an adapter ``from`` a throttled
``ClientError``. Other failures of a row are that row's Error in the output file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from phoneid.domain.reasons import describe
from phoneid.domain.verification import VerificationType

VERIFICATION_TYPES = frozenset({"verifiedUser", "humanAssurance"})


class ConnectTransport(StrEnum):
    """How a stack's Connect clients send their files (the template's ``ConnectTransport``). The
    bucket and the workflow are the same for each: a file under ``clients/{name}/upload/`` is a batch."""

    S3 = "s3"  # each file PUT to a presigned URL the operator issues; results fetched the same way
    SFTP = "sftp"  # a Transfer Family SFTP server, one user per client (billed per hour it exists)
    NONE = "none"  # no client transport: only files the operator puts into the bucket run


@dataclass(frozen=True)
class ConnectProfile:
    """What onboarding provisions for one client: Enroll Key, types, directories, credentials."""

    client_id: str
    client_name: str  # the file-name prefix and the SFTP user name
    types: frozenset[str]
    enroll_key_hash: str  # never the key itself
    emails: tuple[str, ...] = ()
    ssh_public_keys: tuple[str, ...] = ()
    created_at: datetime | None = None

    @property
    def upload_prefix(self) -> str:
        return f"clients/{self.client_name}/upload/"

    @property
    def download_prefix(self) -> str:
        return f"clients/{self.client_name}/download/"


# --- names and keys -------------------------------------------------------------------------------

CLIENT_NAME_PATTERN = r"[a-z][a-z0-9-]{0,38}[a-z0-9]"
_CLIENT_NAME = re.compile(CLIENT_NAME_PATTERN)
_TRANSFER_USER_MIN = 3
_MIN_YEAR = 2000

FileRegion = Literal["US", "INTL"]
FILE_REGIONS: tuple[FileRegion, ...] = ("US", "INTL")

_FILE_NAME = re.compile(
    rf"(?P<client>{CLIENT_NAME_PATTERN})_(?P<region>US|INTL)_(?P<type>verifiedUser|humanAssurance)"
    r"_(?P<stamp>[0-9]{14})\.csv"
)
_UPLOAD_KEY = re.compile(r"clients/(?P<client>[^/]+)/upload/(?P<file>[^/]+)")


def valid_client_name(name: str, *, transfer_user: bool = False) -> bool:
    """Whether ``name`` may be a Connect client name (for AWS Transfer Family: 3 characters or more)."""
    if _CLIENT_NAME.fullmatch(name) is None:
        return False
    return not transfer_user or len(name) >= _TRANSFER_USER_MIN


@dataclass(frozen=True)
class BatchFileName:
    """A file name that follows the rule: what it says about the file."""

    name: str
    client_name: str
    region: FileRegion
    verification_type: VerificationType
    timestamp: datetime

    @property
    def stem(self) -> str:
        return self.name.removesuffix(".csv")


def parse_file_name(name: str) -> BatchFileName | None:
    """The parts of a file name that follows the naming rule; None for any other name."""
    found = _FILE_NAME.fullmatch(name)
    if found is None:
        return None
    try:
        stamp = datetime.strptime(found["stamp"], "%Y%m%d%H%M%S")  # a label of the client's: no zone
    except ValueError:
        return None
    if stamp.year < _MIN_YEAR:
        return None
    region: FileRegion = "US" if found["region"] == "US" else "INTL"
    return BatchFileName(
        name=name,
        client_name=found["client"],
        region=region,
        verification_type=VerificationType(found["type"]),
        timestamp=stamp,
    )


def file_stem(file_name: str) -> str:
    """The name the output, error and rejected files are named after (the input without ``.csv``)."""
    return file_name.removesuffix(".csv") or "unnamed"


def parse_upload_key(key: str) -> tuple[str, str] | None:
    """(client name, file name) of ``clients/{name}/upload/{file}``; None for any other key."""
    found = _UPLOAD_KEY.fullmatch(key)
    return (found["client"], found["file"]) if found else None


def upload_key(client_name: str, file_name: str) -> str:
    return f"clients/{client_name}/upload/{file_name}"


def download_key(client_name: str, file_name: str) -> str:
    return f"clients/{client_name}/download/{file_name}"


def output_file_name(file_name: str) -> str:
    return f"{file_stem(file_name)}_output.csv"


def errors_file_name(file_name: str) -> str:
    return f"{file_stem(file_name)}_errors.csv"


def rejected_file_name(file_name: str) -> str:
    return f"{file_stem(file_name)}_rejected.csv"


def batch_id_of(key: str, version: str | None) -> str:
    """One id per object version (``version``: the S3 versionId, else the ETag)."""
    return hashlib.sha256(f"{key}\n{version or ''}".encode()).hexdigest()[:32]


def work_prefix(batch_id: str) -> str:
    return f"work/{batch_id}/"


def chunk_key(batch_id: str, chunk: int) -> str:
    return f"work/{batch_id}/chunks/{chunk:05d}.jsonl"


def result_key(batch_id: str, chunk: int) -> str:
    return f"work/{batch_id}/results/{chunk:05d}.jsonl"


def errors_key(batch_id: str) -> str:
    return f"work/{batch_id}/errors.jsonl"


def manifest_key(batch_id: str) -> str:
    return f"work/{batch_id}/manifest.json"


# --- batch state ----------------------------------------------------------------------------------


class BatchState(StrEnum):
    """The batch file states as stored: uploaded is the S3 object itself, before its batch exists."""

    VALIDATING = "validating"
    REJECTED = "rejected"
    VERIFYING = "verifying"
    DELIVERED = "delivered"
    FAILED = "failed"  # delivered with rows not processed, or the counts did not add up

    @property
    def final(self) -> bool:
        return self in (BatchState.REJECTED, BatchState.DELIVERED, BatchState.FAILED)


@dataclass(frozen=True)
class Batch:
    """One uploaded file's batch, as the ``ConnectBatchesTable`` holds it (pk ``batch_id``)."""

    batch_id: str
    key: str  # the uploaded object's key
    file_name: str
    client_name: str  # from the key's prefix ("" when the key is not under a client's upload prefix)
    state: BatchState
    created_at: datetime
    updated_at: datetime
    client_id: str | None = None
    verification_type: str | None = None
    file_region: str | None = None  # "US" | "INTL"
    chunks: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)  # BatchStats.counts()
    reason: str | None = None  # a Rejection code when rejected; why when failed


# --- statistics -----------------------------------------------------------------------------------


@dataclass
class BatchStats:
    """The data-quality statistics of one batch, as the "processed" email and ``connect status`` show.

    ``rejected_by_code``: detail rows the row checks refused (duplicates included), by code.
    ``verified``: rows that passed; ``not_verified``: rows verified that did not pass, whose
    evaluation codes ``failed_by_reason`` counts (a row counts once under each of its codes);
    ``errors_by_code``: rows the verification could not run for (API error codes, 8001, 8010, ...);
    ``processing_failed``: rows of a chunk that never produced results (``ERR_PROCESSING_FAILED``).
    """

    rows_read: int = 0
    valid: int = 0
    rejected_by_code: dict[str, int] = field(default_factory=dict)
    verified: int = 0
    not_verified: int = 0
    enrolled: int = 0
    failed_by_reason: dict[str, int] = field(default_factory=dict)
    errors_by_code: dict[str, int] = field(default_factory=dict)
    processing_failed: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def rejected(self) -> int:
        return sum(self.rejected_by_code.values())

    @property
    def duplicates(self) -> int:
        return self.rejected_by_code.get(DUPLICATE_CODE, 0)

    @property
    def verify_errors(self) -> int:
        return sum(self.errors_by_code.values())

    @property
    def processing_seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return round((self.finished_at - self.started_at).total_seconds(), 3)

    def reject(self, code: str) -> None:
        self.rejected_by_code[code] = self.rejected_by_code.get(code, 0) + 1

    def counts(self) -> dict[str, int]:
        """A flat map of numbers (what the batch record stores)."""
        flat = {
            "rowsRead": self.rows_read,
            "valid": self.valid,
            "verified": self.verified,
            "notVerified": self.not_verified,
            "enrolled": self.enrolled,
            "processingFailed": self.processing_failed,
        }
        for prefix, counted in (
            ("rejected:", self.rejected_by_code),
            ("reason:", self.failed_by_reason),
            ("error:", self.errors_by_code),
        ):
            flat.update({prefix + code: n for code, n in counted.items()})
        return flat

    @classmethod
    def from_counts(
        cls,
        counts: Mapping[str, int],
        started_at: datetime | None = None,
        finished_at: datetime | None = None,
    ) -> BatchStats:
        def prefixed(prefix: str) -> dict[str, int]:
            return {k.removeprefix(prefix): int(v) for k, v in counts.items() if k.startswith(prefix)}

        return cls(
            rows_read=int(counts.get("rowsRead", 0)),
            valid=int(counts.get("valid", 0)),
            rejected_by_code=prefixed("rejected:"),
            verified=int(counts.get("verified", 0)),
            not_verified=int(counts.get("notVerified", 0)),
            enrolled=int(counts.get("enrolled", 0)),
            failed_by_reason=prefixed("reason:"),
            errors_by_code=prefixed("error:"),
            processing_failed=int(counts.get("processingFailed", 0)),
            started_at=started_at,
            finished_at=finished_at,
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON the deliver step returns."""
        return {
            "rowsRead": self.rows_read,
            "valid": self.valid,
            "rejected": self.rejected,
            "rejectedByCode": dict(sorted(self.rejected_by_code.items())),
            "duplicates": self.duplicates,
            "verified": self.verified,
            "notVerified": self.not_verified,
            "enrolled": self.enrolled,
            "failedByReason": dict(sorted(self.failed_by_reason.items())),
            "errorsByCode": dict(sorted(self.errors_by_code.items())),
            "processingFailed": self.processing_failed,
            "processingSeconds": self.processing_seconds,
        }

    def text(self) -> str:
        """The statistics as the "processed" email lists them (counts only: no row data, no PII)."""
        lines = [
            f"Rows read: {self.rows_read}",
            f"Valid rows: {self.valid}",
            f"Rejected rows: {self.rejected}",
            *(f"  {code}: {n}" for code, n in sorted(self.rejected_by_code.items())),
            f"Duplicates: {self.duplicates}",
            f"Verified (passed): {self.verified}",
            f"Not verified: {self.not_verified}",
            f"Enrolled: {self.enrolled}",
            "Failed by reason code:" + ("" if self.failed_by_reason else " none"),
            *(
                f"  {code} {_describe(code)}: {n}"
                for code, n in sorted(self.failed_by_reason.items(), key=lambda pair: (-pair[1], pair[0]))
            ),
            f"Rows with a verification error: {self.verify_errors}",
            *(f"  {code}: {n}" for code, n in sorted(self.errors_by_code.items())),
            f"Rows not processed ({PROCESSING_FAILED_CODE}): {self.processing_failed}",
        ]
        seconds = self.processing_seconds
        if seconds is not None:
            lines.append(f"Processing time: {_duration(seconds)}")
        return "\n".join(lines)


DUPLICATE_CODE = "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"
PROCESSING_FAILED_CODE = "ERR_PROCESSING_FAILED"


def _describe(code: str) -> str:
    try:
        return f"({describe(int(code))})"
    except (KeyError, ValueError):
        return ""


def _duration(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min {secs} s"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{seconds:.1f} s"


# --- step errors ----------------------------------------------------------------------------------


class ConnectStepError(Exception):
    """A workflow step's failure; the class name is what the state machine sees as the error."""


class ChunkThrottled(ConnectStepError):
    """A chunk's verifications were throttled by an upstream service: retried with backoff."""


class BatchCountMismatch(ConnectStepError):
    """Output rows plus error rows differ from the detail rows read: the batch failed, loudly."""


class BatchNotFound(ConnectStepError):
    """A step named a batch that has no record (or is not in the state the step needs)."""


# botocore's standard-mode retry list of throttling codes (botocore.retries.standard).
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
_TOO_MANY_REQUESTS = 429


def is_throttling(error: BaseException) -> bool:
    """Whether ``error`` (or an error it was raised from) is an upstream service's throttling."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if getattr(current, "throttled", False) is True:
            return True
        response = getattr(current, "response", None)
        if isinstance(response, Mapping):
            details = response.get("Error")
            code = details.get("Code") if isinstance(details, Mapping) else None
            metadata = response.get("ResponseMetadata")
            status = metadata.get("HTTPStatusCode") if isinstance(metadata, Mapping) else None
            if code in THROTTLING_CODES or status == _TOO_MANY_REQUESTS:
                return True
        current = current.__cause__ or current.__context__
    return False
