"""The decision history: each client's decision records as the leaves of an append-only Merkle tree
(RFC 9162 hashing, ``phoneid.domain.merkle``), so that an auditor can verify offline that a record is
the one written when it was decided (docs/adr/0120-a-decision-history-verified-offline.md).

A leaf is the canonical JSON of an entry. A decision's entry holds the record's own fields, the
``clientRequestId`` in clear and a random nonce, never what an answer adds around them (the reason
codes' descriptions, which a release may reword): the same record gives the same bytes in every
release. Its leaf hash is made in the call that decides and stored with the record.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from phoneid.domain.decisions import DecisionRecord, PossessionAttempts, stamp
from phoneid.domain.merkle import Frontier, leaf_hash

__all__ = [
    "ENTRY_VERSION",
    "NONCE_BYTES",
    "Append",
    "HistoryContended",
    "StreamPage",
    "StreamedLeaf",
    "appended",
    "canonical",
    "decision_entry",
    "sealed",
]

ENTRY_VERSION = 1
NONCE_BYTES = 16


def canonical(entry: dict[str, Any]) -> bytes:
    """UTF-8 JSON, keys sorted, no whitespace: the bytes a leaf hashes and an export carries as they are."""
    return json.dumps(
        entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def decision_entry(record: DecisionRecord, nonce: bytes) -> dict[str, Any]:
    """The entry a decision record is a leaf as; fields that a record does not have are left out."""
    number = record.number
    entry: dict[str, Any] = {
        "v": ENTRY_VERSION,
        "type": "decision",
        "client": record.client_id,
        "id": record.id,
        "tier": record.tier,
        "region": record.region,
        "kind": record.kind.value,
        "flow": record.flow,
        "startedAt": stamp(record.started_at),
        "endedAt": stamp(record.ended_at),
        "outcome": record.outcome.value,
        "categories": dict(record.categories),
        "reasonCodes": list(record.reasons),
        "monitoredCodes": list(record.monitored),
        "errorCode": record.error_code,
        "step": record.step,
        "policy": (
            {"id": record.policy.id, "version": record.policy.version, "hash": record.policy.hash}
            if record.policy
            else None
        ),
        "facts": dict(record.facts),
        "factsAt": stamp(record.facts_at) if record.facts_at else None,
        "possession": _possession(record.possession),
        "number": {"country": number.country, "lastTwo": number.last_two} if number else None,
        "clientRequestId": record.client_request_id,
        "nonce": base64.urlsafe_b64encode(nonce).rstrip(b"=").decode(),
    }
    return {name: value for name, value in entry.items() if value is not None}


def sealed(record: DecisionRecord, nonce: bytes) -> DecisionRecord:
    """``record`` with its nonce and the hash of its leaf, as it is stored."""
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a nonce is {NONCE_BYTES} bytes, not {len(nonce)}")
    return replace(record, nonce=nonce, leaf=leaf_hash(canonical(decision_entry(record, nonce))))


def _possession(attempts: PossessionAttempts | None) -> dict[str, Any] | None:
    if attempts is None:
        return None
    shown = {
        "status": attempts.status,
        "method": attempts.method,
        "mobileAuth": attempts.mobile_auth,
        "smsSent": attempts.sms_sent,
        "otpEntries": attempts.otp_entries,
        "linksSent": attempts.links_sent,
        "linkOpened": attempts.link_opened,
        "deviceKey": attempts.device_key,
    }
    return {name: value for name, value in shown.items() if value is not None}


class HistoryContended(Exception):
    """Another run appended from the shard, or to one of the trees, since this one read them."""


@dataclass(frozen=True)
class StreamedLeaf:
    """A record's leaf as the table's stream shows it: inserted, or written again with another leaf."""

    client_id: str
    record_id: str
    leaf: bytes
    sequence: str  # the stream record's sequence number, increasing within its shard


@dataclass(frozen=True)
class StreamPage:
    """What one read of a shard gave: its records' leaves (others left out), the sequence number of
    the last record read (leaf or not), and whether the shard is closed and read to its end."""

    leaves: tuple[StreamedLeaf, ...]
    last: str | None
    ended: bool


@dataclass(frozen=True)
class Append:
    """Leaves added to one client's tree: its frontier before and after, and what the leaves are."""

    client_id: str
    before: Frontier
    after: Frontier
    record_ids: tuple[str, ...]
    leaves: tuple[bytes, ...]

    @property
    def first(self) -> int:
        return self.before.size


def appended(client_id: str, before: Frontier, leaves: Sequence[StreamedLeaf]) -> Append:
    """``leaves`` added to the tree whose frontier is ``before``, in their order."""
    after = Frontier(before.size, before.hashes)
    after.extend(leaf.leaf for leaf in leaves)
    return Append(
        client_id,
        before,
        after,
        tuple(leaf.record_id for leaf in leaves),
        tuple(leaf.leaf for leaf in leaves),
    )
