"""The clients the local stack makes for itself (the banner's, the demo's), with their secrets.

The clients table holds only a hash of each secret, so a stack started again from its data directory
could not print the banner's secret, nor sign the demo's calls, if the plaintext were not kept: it is
kept in the snapshot, beside the KMS key material (as private: docs/adr/0106). A kept client the
restored stack still has is used again; one it lost (a crash before the first save) is made anew.
"""

from __future__ import annotations

from collections.abc import Callable

from phoneid.bootstrap import container
from phoneid.domain.credentials import verify_secret
from phoneid_dev.snapshot.directory import DataRefused

Credentials = dict[str, str]


class OwnClients:
    def __init__(self, kept: dict[str, Credentials] | None = None, where: str = "") -> None:
        self.kept: dict[str, Credentials] = dict(kept or {})
        self._where = where  # the data directory, for messages

    def get(
        self, role: str, make: Callable[[], Credentials], seeded: Credentials | None = None
    ) -> Credentials:
        """The client of ``role``: ``seeded`` (credentials given to the stack), else the one kept;
        when the stack has no such client, ``make``'s. A client it has must have that secret."""
        wanted = seeded or self.kept.get(role)
        existing = container().clients.get(wanted["client_id"]) if wanted else None
        if wanted is not None and existing is not None:
            if not verify_secret(wanted["client_secret"], existing.secret_hash):
                raise DataRefused(
                    f"--data {self._where}: client {wanted['client_id']} is kept there with another "
                    "secret: seed the secret it was made with, or use another directory"
                )
            chosen = wanted
        else:
            chosen = make()
        self.kept[role] = chosen
        return chosen
