"""Connect's names and keys, pure.

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
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from phoneid.domain.verification import VerificationType

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
