"""Decision records kept by every flow as it answers (docs/decision-records.md).

A record is written in the call that decides, after the decision is stored and before the answer
leaves. A record that cannot be written does not hold the answer back: the failure is logged as
``decision records not written`` with their ids (never their content), which the stack's alarm
counts (docs/adr/0117-decision-records.md).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from phoneid.domain.decisions import (
    DecisionRecord,
    Kind,
    NumberRef,
    Outcome,
    PolicyRef,
    PossessionAttempts,
    facts_of,
)
from phoneid.domain.errors import PhoneIdError
from phoneid.domain.evaluation import Evaluation, Observations, default_policy
from phoneid.domain.history import NONCE_BYTES, sealed
from phoneid.domain.phone import InvalidPhoneNumber, PhoneNumber, Region, parse_phone
from phoneid.domain.policy import Policy
from phoneid.domain.session import Session
from phoneid.ports import DecisionStore, KeyedDigest

if TYPE_CHECKING:
    from phoneid.services.verify.verifier import Verified

logger = Logger(child=True)

NOT_WRITTEN = "decision records not written"  # the alarm's metric filter matches this message
# The MACs a record is found by, cut to 132 bits of their base64: as good as the whole for finding
# one number among a client's, and 44 bytes less in a record that has to stay under 1 KB.
MAC_CHARACTERS = 22


def policy_ref(policy: Policy) -> PolicyRef:
    """The policy as a record names it: the stack's default or the client's own, its version, and a
    SHA-256 of its canonical JSON (the same document always gives the same hash)."""
    named = "default" if policy is default_policy() else "client"
    return PolicyRef(named, policy.version, policy.content_hash)


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
        return self._mac.digest(f"decision-number:{client_id}:{e164}")[:MAC_CHARACTERS]

    def request_mac(self, client_id: str, client_request_id: str | None) -> str | None:
        if client_request_id is None:
            return None
        return self._mac.digest(f"decision-request:{client_id}:{client_request_id}")[:MAC_CHARACTERS]

    def keep(
        self, ids: Sequence[str], records: Callable[[], Sequence[DecisionRecord]], *, once: str | None = None
    ) -> None:
        """Build the records of ``ids`` and store them (counted once). Nothing here raises: the
        decision is stored and its answer must leave, so a failure, in the MACs, the seal or the
        write, is logged for the alarm (with the ids, never the content)."""
        try:
            built = [sealed(record, secrets.token_bytes(NONCE_BYTES)) for record in records()]
            if built:
                self._store.add(built, once=once)
        except Exception as error:  # the answer still leaves; the gap is alarmed (ADR 0117)
            logger.error(
                NOT_WRITTEN,
                extra={"ids": list(ids[:20]), "count": len(ids), "error_type": type(error).__name__},
            )

    # --- records of each kind --------------------------------------------------------------------

    def of_flow(
        self,
        session: Session,
        *,
        ended_at: datetime,
        step: str,
        client_request_id: str | None,
        evaluation: Evaluation | None = None,
        observations: Observations | None = None,
        policy: Policy | None = None,
        device_key: str | None = None,
    ) -> DecisionRecord:
        """A staged or unify flow's record, as the step that ended it answered: with the policy's
        evaluation (complete, unify), or failed before one (possession or challenge failed)."""
        client_id = session.client_id
        fields = {
            "id": session.correlation_id,
            "client_id": client_id,
            "tier": self.tier,
            "region": self.region,
            "kind": Kind.STAGED if session.unify is None else Kind.UNIFY,
            "flow": session.flow_type,
            "started_at": session.created_at,
            "ended_at": ended_at,
            "step": step,
            "possession": PossessionAttempts.of(session.possession, device_key=device_key),
            "number": self.number_of(client_id, session.phone_number),
            "client_request_id": client_request_id,
            "request_mac": self.request_mac(client_id, client_request_id),
        }
        if evaluation is None:
            return DecisionRecord(outcome=Outcome.FAIL, **fields)  # type: ignore[arg-type]
        return DecisionRecord.evaluated(
            evaluation,
            policy=policy_ref(policy) if policy else None,
            facts=facts_of(observations or {}),
            facts_at=ended_at,
            **fields,
        )

    def of_expired(self, session: Session) -> DecisionRecord:
        """A flow that expired before an answer ended it: failed, as its session last stood."""
        return self.of_flow(session, ended_at=session.expires_at, step="expired", client_request_id=None)

    def of_verification(
        self,
        caller_id: str,
        decision_id: str,
        kind: Kind,
        outcome: Verified | PhoneIdError,
        *,
        flow: str | None,
        started_at: datetime,
        ended_at: datetime,
        client_request_id: str | None,
        phone_number: str | None = None,
    ) -> DecisionRecord:
        """A verification's record (``/v3/verify``, a batch's item, a Connect row): its evaluation,
        or the error that refused the item before one (``phone_number``: the item's, if any)."""
        fields = {
            "id": decision_id,
            "client_id": caller_id,
            "tier": self.tier,
            "region": self.region,
            "kind": kind,
            "flow": flow,
            "started_at": started_at,
            "ended_at": ended_at,
            "client_request_id": client_request_id,
            "request_mac": self.request_mac(caller_id, client_request_id),
        }
        if isinstance(outcome, PhoneIdError):
            number = self.number_of(caller_id, phone_number) if phone_number else None
            return DecisionRecord(outcome=Outcome.ERROR, error_code=outcome.code, number=number, **fields)  # type: ignore[arg-type]
        return DecisionRecord.evaluated(
            outcome.evaluation,
            policy=policy_ref(outcome.policy),
            facts=facts_of(outcome.observations),
            facts_at=ended_at,
            number=NumberRef(
                self.number_mac(caller_id, outcome.phone_number), outcome.country, outcome.phone_number[-2:]
            ),
            **fields,
        )

    def refused(
        self,
        caller_id: str,
        decision_id: str,
        kind: Kind,
        code: int,
        *,
        flow: str | None,
        started_at: datetime,
        ended_at: datetime,
        client_request_id: str | None,
    ) -> DecisionRecord:
        """An item refused before anything was decided (a batch item that is not a valid item)."""
        return DecisionRecord(
            id=decision_id,
            client_id=caller_id,
            tier=self.tier,
            region=self.region,
            kind=kind,
            flow=flow,
            started_at=started_at,
            ended_at=ended_at,
            outcome=Outcome.ERROR,
            error_code=code,
            client_request_id=client_request_id,
            request_mac=self.request_mac(caller_id, client_request_id),
        )

    def number_of(self, client_id: str, e164: str | None) -> NumberRef | None:
        """The number as a record keeps it; a number this stack cannot parse keeps only its MAC."""
        if not e164:
            return None
        try:
            phone = parse_phone(e164, self.region)
        except InvalidPhoneNumber:
            return NumberRef(self.number_mac(client_id, e164), "", e164[-2:] if len(e164) > 2 else "")
        return self.number(client_id, phone)
