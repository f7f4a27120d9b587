"""One uploaded file's batch as the ``ConnectBatchesTable`` holds it, and the states it goes through."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from phoneid.domain.connect.names import parse_upload_key


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

    @classmethod
    def claimed(cls, batch_id: str, key: str, now: datetime) -> Batch:
        """The record of the upload ``key``'s batch as the step that claims it writes it."""
        place = parse_upload_key(key)
        client_name, file_name = place or ("", key.rsplit("/", 1)[-1])
        return cls(
            batch_id=batch_id,
            key=key,
            file_name=file_name,
            client_name=client_name,
            state=BatchState.VALIDATING,
            created_at=now,
            updated_at=now,
        )
