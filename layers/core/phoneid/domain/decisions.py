"""Decision records: one for every decision PhoneID answered, kept for the client that asked.

A record says what was decided, when, by which policy and on which facts, and how possession went;
it holds nothing personal in clear (docs/decision-records.md): the number only as a keyed MAC (for
look-ups), its country and its last two digits (for display); the ``clientRequestId`` sealed by the
store. The summary is kept at write time as per-day tallies (``tallies``), never from scans.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from phoneid.domain.evaluation import SOURCE_FAILED, Evaluation, Observations
from phoneid.domain.policy import SIGNAL_SOURCES, Signal
from phoneid.domain.possession import Method, MobileAuth, PossessionState

__all__ = [
    "CHANNELS",
    "DecisionPage",
    "DecisionQuery",
    "DecisionRecord",
    "Kind",
    "NumberRef",
    "Outcome",
    "PolicyRef",
    "PossessionAttempts",
    "added",
    "fact_source",
    "facts_of",
    "tallies",
]


class Kind(StrEnum):
    STAGED = "staged"
    UNIFY = "unify"
    VERIFY = "verify"
    VERIFY_BATCH = "verify-batch"
    CONNECT = "connect"


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the item was refused before a decision (its code says why)


@dataclass(frozen=True)
class PolicyRef:
    """The policy that decided: the operator's id for it, its version and a hash of its content."""

    id: str
    version: str
    hash: str


@dataclass(frozen=True)
class NumberRef:
    """The number as a record keeps it: a keyed MAC to find it, its country and last two digits to show."""

    mac: str
    country: str
    last_two: str


@dataclass(frozen=True)
class PossessionAttempts:
    """How possession went in a flow: what was tried, sent and entered, never a code or a token."""

    status: str = "not-asked"  # passed, failed, pending (the flow ended before it), not-asked
    method: str | None = None  # what decided it: mobile-auth, otp, instant-link, preset
    mobile_auth: str = MobileAuth.NOT_TRIED.value
    sms_sent: int = 0
    otp_entries: int = 0
    links_sent: int = 0
    link_opened: bool = False
    device_key: str | None = None  # "used" (a proven key stood in for possession) or "bound"

    @classmethod
    def of(cls, state: PossessionState, *, device_key: str | None = None) -> PossessionAttempts:
        link = state.link_sent_at is not None
        return cls(
            status=state.status.value,
            method=state.method.value if state.method else None,
            mobile_auth=state.mobile_auth.value,
            # One send counter serves both texts: the link's text when a link was sent, else codes.
            sms_sent=0 if link else state.sends,
            otp_entries=state.entries,
            links_sent=state.sends if link else 0,
            link_opened=state.method == Method.INSTANT_LINK and state.status.value == "passed",
            device_key=device_key,
        )


@dataclass(frozen=True)
class DecisionRecord:
    id: str  # the correlationId, the verify request's id, `{correlationId}#{item}` or `{batchId}#{row}`
    client_id: str
    tier: str
    region: str
    kind: Kind
    flow: str | None  # the flow type (desktop, mobile) or the verification type (the solution)
    started_at: datetime
    ended_at: datetime
    outcome: Outcome
    categories: Mapping[str, str] = field(default_factory=dict)  # category -> "pass" / "fail"
    reasons: tuple[int, ...] = ()
    monitored: tuple[int, ...] = ()
    error_code: int | None = None
    step: str | None = None  # the step whose answer ended a flow
    policy: PolicyRef | None = None
    facts: Mapping[str, Any] = field(default_factory=dict)  # signal -> value as JSON (see facts_of)
    facts_at: datetime | None = None
    possession: PossessionAttempts | None = None
    number: NumberRef | None = None
    client_request_id: str | None = None  # sealed under the PII key by the store
    request_mac: str | None = None  # a keyed MAC of the clientRequestId, to filter by it
    # Its leaf in the client's decision history (domain.history.sealed): a random nonce, and the
    # hash of the entry it makes with it, both made in the call that decides.
    nonce: bytes | None = None
    leaf: bytes | None = None

    @property
    def day(self) -> date:
        return self.ended_at.date()

    @property
    def success(self) -> bool:
        return self.outcome == Outcome.PASS

    @classmethod
    def evaluated(cls, evaluation: Evaluation, **fields: Any) -> DecisionRecord:
        """A decision the policy made: its outcome, categories and codes from the evaluation."""
        return cls(
            outcome=Outcome.PASS if evaluation.passed else Outcome.FAIL,
            categories={c.value: "fail" if codes else "pass" for c, codes in evaluation.results.items()},
            reasons=tuple(sorted(evaluation.codes)),
            monitored=tuple(evaluation.monitored),
            **fields,
        )


SOURCE_FAILED_FACT: Mapping[str, bool] = {"sourceFailed": True}


def stamp(moment: datetime) -> str:
    """ISO 8601 in UTC to the millisecond, as answers show it and keys sort it."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def facts_of(observations: Observations) -> dict[str, Any]:
    """The evaluated facts as JSON: sets as sorted lists, a failed source as ``{"sourceFailed": true}``.

    Observations hold no personal data: matches are "match"/"mismatch" and counts, never the values
    compared (domain.evaluation.identity_observations)."""
    facts: dict[str, Any] = {}
    for signal, value in observations.items():
        facts[str(signal)] = _json_value(value)
    return facts


def _json_value(value: Any) -> Any:
    if value is SOURCE_FAILED:
        return dict(SOURCE_FAILED_FACT)
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, frozenset | set | tuple | list):
        return sorted((_json_value(v) for v in value), key=repr)
    return str(value)


def fact_source(signal: str) -> str:
    """Where a signal's value comes from, as docs/fraud-policy.md names it."""
    try:
        return SIGNAL_SOURCES[Signal(signal)]
    except ValueError:
        return "unknown"


# Conversion by channel: (what was tried, what succeeded) per channel, counted once per decision.
CHANNELS: Mapping[str, tuple[str, str]] = {
    "sms": ("smsSent", "smsVerified"),
    "instantLink": ("linksSent", "linksOpened"),
    "mobileAuth": ("mobileAuthTried", "mobileAuthPassed"),
}


def tallies(record: DecisionRecord) -> dict[str, int]:
    """What one record adds to its client's summary of its day: totals, outcome, kind, each reason
    code, and the channels' conversions. Names are DynamoDB attribute-safe."""
    counted = {"total": 1, f"outcome_{record.outcome.value}": 1, f"kind_{record.kind.value}": 1}
    for code in record.reasons:
        counted[f"reason_{code}"] = 1
    attempts = record.possession
    if attempts is not None:
        verified = attempts.status == "passed"
        if attempts.sms_sent:
            counted["smsSent"] = 1
            if verified and attempts.method == Method.OTP.value:
                counted["smsVerified"] = 1
        if attempts.links_sent:
            counted["linksSent"] = 1
            if attempts.link_opened:
                counted["linksOpened"] = 1
        if attempts.mobile_auth != MobileAuth.NOT_TRIED.value:
            counted["mobileAuthTried"] = 1
            if attempts.mobile_auth == MobileAuth.PASSED.value:
                counted["mobileAuthPassed"] = 1
    return counted


def added(records: Iterable[DecisionRecord]) -> dict[date, dict[str, int]]:
    """The tallies of many records, summed per day."""
    days: dict[date, dict[str, int]] = {}
    for record in records:
        day = days.setdefault(record.day, {})
        for name, count in tallies(record).items():
            day[name] = day.get(name, 0) + count
    return days


@dataclass(frozen=True)
class DecisionQuery:
    """A list's filters: the time range always, the rest when given (MACs, never the values)."""

    since: datetime  # inclusive
    until: datetime  # exclusive
    number_mac: str | None = None
    kind: Kind | None = None
    outcome: Outcome | None = None
    reason: int | None = None
    request_mac: str | None = None


@dataclass(frozen=True)
class DecisionPage:
    items: tuple[DecisionRecord, ...]
    last_position: str | None  # where the next page starts; None: the list ended
