"""Idempotent writes: an ``Idempotency-Key`` and what one request under it is, as the IETF draft
"The Idempotency-Key HTTP Header Field" describes them (docs/adr/0100-idempotency-keys.md).

A key belongs to one client; a record says which request (its fingerprint) holds the key, whether
that request is still running (until its lease ends) or answered, and when the key expires.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from phoneid.domain.errors import MalformedRequest

HEADER = "Idempotency-Key"
# How long a key answers its first response again: the draft leaves it to the server; 24 hours, as
# Stripe's API keeps its keys.
KEY_LIFETIME = timedelta(hours=24)
MAX_KEY_LENGTH = 255
_KEY = re.compile(rf"[A-Za-z0-9_.:+/=-]{{1,{MAX_KEY_LENGTH}}}")
KEY_RULE = f"must be 1 to {MAX_KEY_LENGTH} letters, digits or '-_.:+/=', optionally in double quotes"


def parse_key(values: list[str]) -> str:
    """The key of the header's values: one value, an sf-string (``"abc"``, as the draft writes it)
    or the bare token (``abc``); both name the same key."""
    if len(values) != 1:
        raise MalformedRequest(problems={HEADER: "must appear once"})
    value = values[0].strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not _KEY.fullmatch(value):
        raise MalformedRequest(problems={HEADER: KEY_RULE})
    return value


def fingerprint(method: str, route: str, body: Any) -> str:
    """What makes two requests the same one: the method, the route and the body's canonical JSON
    (keys sorted, no whitespace), so key order and spacing do not make a retry another request."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{method.upper()} {route}\n{canonical}".encode()).hexdigest()


def record_id(client_id: str, key: str) -> str:
    """Keys are per client: the client's id scopes the key, which is kept only as a digest (a key
    is the integrator's own string and could carry anything)."""
    return f"{client_id}#{hashlib.sha256(key.encode()).hexdigest()}"


class RecordStatus(StrEnum):
    IN_PROGRESS = "in-progress"
    COMPLETED = "completed"


@dataclass(frozen=True)
class KeyRecord:
    """One key of one client: the request holding it, and its answer once it has one (sealed)."""

    record_id: str
    client_id: str
    fingerprint: str
    status: RecordStatus
    owner: str  # the attempt holding the lease: only it may complete or release the record
    lease_until: datetime
    expires_at: datetime
    response: bytes | None = None

    def expired(self, now: datetime) -> bool:
        return now >= self.expires_at

    def abandoned(self, now: datetime) -> bool:
        """An attempt that ran out of time (its function timed out) without answering."""
        return self.status is RecordStatus.IN_PROGRESS and now >= self.lease_until

    def claimable(self, now: datetime) -> bool:
        return self.expired(now) or self.abandoned(now)


@dataclass(frozen=True)
class IdempotentRequest:
    """A request that carries a key: whose, which key, and what it asks."""

    client_id: str
    key: str
    fingerprint: str

    @property
    def record_id(self) -> str:
        return record_id(self.client_id, self.key)

    def claim(self, owner: str, now: datetime, lease: timedelta) -> KeyRecord:
        return KeyRecord(
            record_id=self.record_id,
            client_id=self.client_id,
            fingerprint=self.fingerprint,
            status=RecordStatus.IN_PROGRESS,
            owner=owner,
            lease_until=now + lease,
            expires_at=now + KEY_LIFETIME,
        )


def stored(status_code: int) -> bool:
    """Only a success is answered again. A refusal (4xx) changed nothing, so the corrected request
    may be sent under the same key (SPEC: after a non-200 the corrected request may be retried); a
    5xx is never kept, so a retry runs the request again."""
    return 200 <= status_code < 300


@dataclass(frozen=True)
class Replay:
    """The first answer under the key, as it was sent: status, headers and body."""

    response: dict[str, Any]


@dataclass(frozen=True)
class Claimed:
    """This attempt holds the key: it runs the request, then the key is kept or freed."""

    record: KeyRecord
