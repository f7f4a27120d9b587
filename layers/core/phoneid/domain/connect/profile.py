"""A Connect client's profile: what onboarding provisions, and how the stack's clients send files."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

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
