"""Decision records kept by every flow as it answers (docs/decisions.md).

A record is written in the call that decides, after the decision is stored and before the answer
leaves. A record that cannot be written does not hold the answer back: the failure is logged as
``decision records not written`` with their ids (never their content), which the stack's alarm
counts (docs/adr/0117-decision-records.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache

from aws_lambda_powertools import Logger

from phoneid.domain.decisions import DecisionRecord, NumberRef, PolicyRef
from phoneid.domain.phone import PhoneNumber, Region
from phoneid.domain.policy import Policy
from phoneid.ports import DecisionStore, KeyedDigest

logger = Logger(child=True)

NOT_WRITTEN = "decision records not written"  # the alarm's metric filter matches this message


@cache
def _policy_hash(canonical: str) -> str:
    return hashlib.sha256(canonical.encode()).hexdigest()


def policy_ref(policy: Policy, *, default: bool) -> PolicyRef:
    """The policy as a record names it: the stack's default or the client's own, its version, and a
    SHA-256 of its canonical JSON (the same document always gives the same hash)."""
    canonical = json.dumps(policy.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return PolicyRef("default" if default else "client", policy.version, _policy_hash(canonical))


class DecisionLog:
    """What the flows call to keep their decisions: the number and request id MACed, then stored."""

    def __init__(self, store: DecisionStore, mac: KeyedDigest, *, tier: str, region: Region) -> None:
        self._store = store
        self._mac = mac
        self.tier = tier
        self.region = region

    def number(self, client_id: str, phone: PhoneNumber | None) -> NumberRef | None:
        if phone is None:
            return None
        return NumberRef(self.number_mac(client_id, phone.e164), phone.country, phone.e164[-2:])

    def number_mac(self, client_id: str, e164: str) -> str:
        return self._mac.digest(f"decision-number:{client_id}:{e164}")

    def request_mac(self, client_id: str, client_request_id: str | None) -> str | None:
        if client_request_id is None:
            return None
        return self._mac.digest(f"decision-request:{client_id}:{client_request_id}")

    def keep(self, records: Sequence[DecisionRecord], *, once: str | None = None) -> None:
        """Store the records (counted once); a failure is logged for the alarm, never raised."""
        if not records:
            return
        try:
            self._store.add(records, once=once)
        except Exception as error:  # the answer still leaves; the gap is alarmed (ADR 0117)
            logger.error(
                NOT_WRITTEN,
                extra={
                    "ids": [record.id for record in records[:20]],
                    "count": len(records),
                    "error_type": type(error).__name__,
                },
            )
