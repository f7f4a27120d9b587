"""Connect: batch verification files. Shared types; the file rules live beside them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

VERIFICATION_TYPES = frozenset({"verifiedUser", "humanAssurance"})


@dataclass(frozen=True)
class ConnectProfile:
    """What onboarding provisions for one client (SPEC: Enroll Key, types, directories, credentials)."""

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
