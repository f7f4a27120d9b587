"""The fraud policy as data: rules from signals to reason codes, windows, source timeouts and the
assurance levels. ``phoneid/policy/default.yaml`` is the default; an operator may give a client its
own document of the same shape. Every document is validated on load; errors name the bad entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from phoneid.domain.reasons import REASONS, Category

Scalar = bool | int | float | str


class Signal(StrEnum):
    """Everything a rule may test. docs/fraud-policy.md says where each comes from."""

    # computed from the request, the flow and the identity records
    POSSESSION = "possession"
    KEY_MISMATCH = "keyMismatch"
    IDENTITY_FOUND = "identityFound"
    IDENTITY_MISMATCHES = "identityMismatches"
    IDENTITY_CONFIRMED_ELEMENTS = "identityConfirmedElements"
    SSN_MATCH = "ssnMatch"
    DOB_MATCH = "dobMatch"
    NAME_MATCH = "nameMatch"
    ADDRESS_MATCH = "addressMatch"
    SOURCES_WITH_MISMATCH = "sourcesWithMismatch"
    ACTIVE_IDENTITY = "activeIdentity"
    ANY_INFORMATION = "anyInformation"
    # the carrier, through CAMARA
    SIM_SWAP_HOURS_AGO = "simSwapHoursAgo"
    CALL_FORWARDING = "callForwarding"
    TENURE_DAYS = "tenureDays"
    NUMBER_RECYCLED = "numberRecycled"
    KYC_NAME_MATCH = "kycNameMatch"
    KYC_ELEMENTS_SUPPLIED = "kycElementsSupplied"
    KYC_ELEMENTS_UNCONFIRMED = "kycElementsUnconfirmed"
    SECONDARY_SOURCE_MISMATCHES = "secondarySourceMismatches"
    NETWORK_REACHABLE = "networkReachable"
    # line type: the operator's override registry, else the numbering plan
    LINE_TYPE = "lineType"
    LINE_TYPE_REGISTRY = "lineTypeRegistry"
    # lists the operator maintains
    PUBLIC_SMS = "publicSms"
    SIM_TRUST_SCORE = "simTrustScore"
    PORT_HOURS_AGO = "portHoursAgo"
    BOT_LINKED = "botLinked"
    AML_LISTED = "amlListed"
    SSN_ISSUED_BEFORE_BIRTH = "ssnIssuedBeforeBirth"
    CLAIMED_ADDRESS_CORRECTIONAL = "claimedAddressCorrectional"
    NUMBER_ADDRESS_CORRECTIONAL = "numberAddressCorrectional"
    IDENTITY_DECEASED = "identityDeceased"
    NUMBER_OWNER_DECEASED = "numberOwnerDeceased"
    # PhoneID's own records: Identity Manager, verifications and change events
    IDENTITIES_ON_NUMBER = "identitiesOnNumber"
    SHORT_TENURE_IDENTITIES_ON_NUMBER = "shortTenureIdentitiesOnNumber"
    DAYS_SINCE_ASSOCIATION = "daysSinceAssociation"
    DISCONNECT_SINCE_ASSOCIATION = "disconnectSinceAssociation"
    PRIOR_ACTIVITY = "priorActivity"
    RECENT_CHECKS = "recentChecks"
    RECENT_CHECKS_SHARING_ATTRIBUTES = "recentChecksSharingAttributes"
    NUMBER_CHANGE_EVENTS = "numberChangeEvents"
    # reason codes a data partner reported for the number, loaded with the identity records
    PARTNER_FINDINGS = "partnerFindings"


# Where each signal comes from, as docs/fraud-policy.md says it.
SIGNAL_SOURCES: Mapping[Signal, str] = {
    Signal.POSSESSION: "the flow's possession check",
    Signal.KEY_MISMATCH: "the device key (unified authentication)",
    Signal.IDENTITY_FOUND: "identity records",
    Signal.IDENTITY_MISMATCHES: "identity records",
    Signal.IDENTITY_CONFIRMED_ELEMENTS: "identity records",
    Signal.SSN_MATCH: "identity records",
    Signal.DOB_MATCH: "identity records",
    Signal.NAME_MATCH: "identity records",
    Signal.ADDRESS_MATCH: "identity records",
    Signal.SOURCES_WITH_MISMATCH: "identity records and carrier KYC Match",
    Signal.ACTIVE_IDENTITY: "identity records and Identity Manager",
    Signal.ANY_INFORMATION: "identity records, Identity Manager and the activity log",
    Signal.SIM_SWAP_HOURS_AGO: "carrier: CAMARA SIM Swap",
    Signal.CALL_FORWARDING: "carrier: CAMARA Call Forwarding Signal",
    Signal.TENURE_DAYS: "carrier: CAMARA KYC Tenure",
    Signal.NUMBER_RECYCLED: "carrier: CAMARA Number Recycling",
    Signal.KYC_NAME_MATCH: "carrier: CAMARA KYC Match",
    Signal.KYC_ELEMENTS_SUPPLIED: "carrier: CAMARA KYC Match",
    Signal.KYC_ELEMENTS_UNCONFIRMED: "carrier: CAMARA KYC Match",
    Signal.SECONDARY_SOURCE_MISMATCHES: "carrier: CAMARA KYC Match",
    Signal.NETWORK_REACHABLE: "carrier: CAMARA Device Reachability Status",
    Signal.LINE_TYPE: "list `line-types`, else the numbering plan",
    Signal.LINE_TYPE_REGISTRY: "list `line-types`",
    Signal.PUBLIC_SMS: "list `public-sms`",
    Signal.SIM_TRUST_SCORE: "list `sim-trust`",
    Signal.PORT_HOURS_AGO: "list `port-events`",
    Signal.BOT_LINKED: "list `bot-numbers`",
    Signal.AML_LISTED: "list `aml`",
    Signal.SSN_ISSUED_BEFORE_BIRTH: "list `ssn-issuance`",
    Signal.CLAIMED_ADDRESS_CORRECTIONAL: "list `correctional-addresses`",
    Signal.NUMBER_ADDRESS_CORRECTIONAL: "list `correctional-addresses`",
    Signal.IDENTITY_DECEASED: "list `deceased`",
    Signal.NUMBER_OWNER_DECEASED: "list `deceased`",
    Signal.IDENTITIES_ON_NUMBER: "Identity Manager",
    Signal.SHORT_TENURE_IDENTITIES_ON_NUMBER: "Identity Manager",
    Signal.DAYS_SINCE_ASSOCIATION: "Identity Manager",
    Signal.DISCONNECT_SINCE_ASSOCIATION: "Identity Manager and change events",
    Signal.PRIOR_ACTIVITY: "activity log",
    Signal.RECENT_CHECKS: "activity log",
    Signal.RECENT_CHECKS_SHARING_ATTRIBUTES: "activity log",
    Signal.NUMBER_CHANGE_EVENTS: "change events",
    Signal.PARTNER_FINDINGS: "identity records (`reputationReasons`)",
}


class Action(StrEnum):
    FAIL = "fail"  # the rule's category fails
    MONITOR = "monitor"  # logged and counted only
    OFF = "off"  # not evaluated; its sources are not asked


class OnSourceFailure(StrEnum):
    SKIP = "skip"  # a failed source raises nothing (fail open)
    FAIL = "fail"  # a failed source raises the code (fail closed)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Condition(_Strict):
    """One signal and its tests; all tests must hold."""

    signal: Signal
    is_: Scalar | None = Field(default=None, alias="is")
    in_: tuple[Scalar, ...] | None = Field(default=None, alias="in", min_length=1)
    below: float | None = None
    atLeast: float | None = None

    @model_validator(mode="after")
    def _has_a_test(self) -> Condition:
        if self.is_ is None and self.in_ is None and self.below is None and self.atLeast is None:
            raise ValueError("a condition needs at least one test: is, in, below or atLeast")
        return self

    def holds(self, value: Any) -> bool:
        """Whether ``value`` (an observation of the signal) passes every test."""
        if self.is_ is not None and not _equal(value, self.is_):
            return False
        if self.in_ is not None and not any(_equal(value, option) for option in self.in_):
            return False
        if self.below is not None and not _compare(value, "below", self.below):
            return False
        return self.atLeast is None or _compare(value, "atLeast", self.atLeast)

    @cached_property
    def test(self) -> Callable[[Any], bool]:
        """``holds`` as one function, specialised for the common single tests (it runs per rule per
        verification)."""
        if self.in_ is None and self.below is None and self.atLeast is None and self.is_ is not None:
            expected = self.is_
            if isinstance(expected, bool):
                return lambda value: value is expected
            return lambda value: not isinstance(value, bool) and bool(value == expected)
        return self.holds

    def thresholds(self) -> tuple[float, ...]:
        return tuple(t for t in (self.below, self.atLeast) if t is not None)

    def describe(self) -> str:
        """``simSwapHoursAgo < 24``, as the docs show a condition."""
        tests = []
        if self.is_ is not None:
            tests.append(f"= {_show(self.is_)}")
        if self.in_ is not None:
            tests.append("in " + ", ".join(_show(v) for v in self.in_))
        if self.atLeast is not None:
            tests.append(f">= {_show(self.atLeast)}")
        if self.below is not None:
            tests.append(f"< {_show(self.below)}")
        return f"`{self.signal.value}` " + " and ".join(tests)


def _show(value: Scalar) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _equal(value: Any, expected: Scalar) -> bool:
    # bool is an int in Python: True must not equal 1.
    if isinstance(value, bool) or isinstance(expected, bool):
        return isinstance(value, bool) and isinstance(expected, bool) and value is expected
    return bool(value == expected)


def _compare(value: Any, test: str, threshold: float) -> bool:
    """Numbers compare as numbers; a bounded observation (known only against some thresholds, like
    a carrier's tenure check) answers for the thresholds it was asked about."""
    if isinstance(value, Bounds):
        answer = value.at_least(threshold)
        if answer is None:
            return False
        return answer if test == "atLeast" else not answer
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value >= threshold if test == "atLeast" else value < threshold


class Bounds:
    """A quantity known only as "at least T" or "less than T" for some thresholds T."""

    def __init__(self, at_least: Mapping[float, bool]) -> None:
        self._at_least = dict(at_least)

    def at_least(self, threshold: float) -> bool | None:
        return self._at_least.get(threshold)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bounds) and other._at_least == self._at_least

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._at_least.items())))

    def __repr__(self) -> str:
        return f"Bounds({self._at_least!r})"


Flow = Literal["complete", "unify", "verify"]
ALL_FLOWS: tuple[Flow, ...] = ("complete", "unify", "verify")


class Rule(_Strict):
    code: int
    category: Category
    when: tuple[Condition, ...] = Field(min_length=1)
    action: Action = Action.FAIL
    onSourceFailure: OnSourceFailure = OnSourceFailure.SKIP
    # The flows the rule applies to: complete (staged flow), unify (unify-status/bind) and verify
    # (/v3/verify, its batch and Connect rows).
    flows: tuple[Flow, ...] = Field(default=ALL_FLOWS, min_length=1)
    # Also raised when a data partner reported this code for the number (``reputationReasons`` of
    # the identity records), whatever the conditions say.
    acceptFindings: bool = True

    @model_validator(mode="after")
    def _known_code(self) -> Rule:
        if self.code not in REASONS:
            raise ValueError(f"{self.code} is not a reason code of the evaluation")
        expected = REASONS[self.code][0]
        if self.category != expected:
            raise ValueError(f"code {self.code} belongs to {expected.value}, not {self.category.value}")
        return self

    @cached_property
    def signals(self) -> frozenset[Signal]:
        return frozenset(condition.signal for condition in self.when)


class RuleCheck(NamedTuple):
    """A rule as ``evaluate`` runs it."""

    code: int
    category: Category
    monitor_only: bool
    accept_findings: bool
    fail_closed: bool
    signals: tuple[Signal, ...]
    tests: tuple[Callable[[Any], bool], ...]


class Windows(_Strict):
    recentActivityHours: Annotated[int, Field(ge=1, le=24 * 90)] = 24
    shortTenureDays: Annotated[int, Field(ge=1, le=3650)] = 90
    numberChangeDays: Annotated[int, Field(ge=1, le=3650)] = 30
    historyDays: Annotated[int, Field(ge=1, le=3650)] = 365


SourceName = Literal["carrier", "lists", "records"]


class Sources(_Strict):
    deadlineMs: Annotated[int, Field(ge=100, le=20_000)] = 4000
    timeoutsMs: dict[SourceName, Annotated[int, Field(ge=50, le=20_000)]] = Field(default_factory=dict)

    def timeout_seconds(self, source: SourceName) -> float:
        return min(self.timeoutsMs.get(source, self.deadlineMs), self.deadlineMs) / 1000


class Reason(_Strict):
    codes: tuple[int, ...] = ()
    confirmedElements: Annotated[int, Field(ge=0, le=4)] | None = None
    secondarySourceConfirms: bool | None = None
    enrolledBefore: bool | None = None
    identityFound: bool | None = None

    @cached_property
    def unconditional(self) -> bool:
        """A reason with no condition: its level's fallback."""
        return not self.model_dump(exclude_none=True, exclude_defaults=True)

    @field_validator("codes")
    @classmethod
    def _known(cls, codes: tuple[int, ...]) -> tuple[int, ...]:
        unknown = [code for code in codes if code not in REASONS]
        if unknown:
            raise ValueError(f"{unknown} are not reason codes of the evaluation")
        return codes


AssuranceLevel = Literal["AL-1", "AL0", "AL1", "AL2", "AL3"]


class Level(_Strict):
    level: AssuranceLevel
    reasons: dict[str, Reason] = Field(min_length=1)


class Policy(_Strict):
    version: Annotated[str, Field(min_length=1, max_length=64)]
    windows: Windows = Windows()
    sources: Sources = Sources()
    rules: tuple[Rule, ...]
    assurance: tuple[Level, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _each_code_once(self) -> Policy:
        seen: set[int] = set()
        for rule in self.rules:
            if rule.code in seen:
                raise ValueError(f"code {rule.code} has more than one rule")
            seen.add(rule.code)
        return self

    # What every verification asks of the policy is worked out once per policy (a Connect file asks
    # it 800,000 times). A policy is never changed in place, so these never go stale.

    @cached_property
    def flow_rules(self) -> Mapping[Flow, tuple[Rule, ...]]:
        return {
            flow: tuple(rule for rule in self.rules if rule.action != Action.OFF and flow in rule.flows)
            for flow in ALL_FLOWS
        }

    @cached_property
    def flow_checks(self) -> Mapping[Flow, tuple[RuleCheck, ...]]:
        """Each flow's active rules as plain tuples, in order, for ``evaluate``."""
        return {
            flow: tuple(
                RuleCheck(
                    code=rule.code,
                    category=rule.category,
                    monitor_only=rule.action != Action.FAIL,
                    accept_findings=rule.acceptFindings,
                    fail_closed=rule.onSourceFailure == OnSourceFailure.FAIL,
                    signals=tuple(condition.signal for condition in rule.when),
                    tests=tuple(condition.test for condition in rule.when),
                )
                for rule in rules
            )
            for flow, rules in self.flow_rules.items()
        }

    @cached_property
    def flow_signals(self) -> Mapping[Flow, frozenset[Signal]]:
        needed = {}
        for flow, rules in self.flow_rules.items():
            findings = {Signal.PARTNER_FINDINGS} if any(rule.acceptFindings for rule in rules) else set()
            needed[flow] = frozenset(signal for rule in rules for signal in rule.signals).union(findings)
        return needed

    @cached_property
    def signal_thresholds(self) -> Mapping[Signal, tuple[float, ...]]:
        found: dict[Signal, set[float]] = {}
        for rule in self.rules:
            if rule.action == Action.OFF:
                continue
            for condition in rule.when:
                found.setdefault(condition.signal, set()).update(condition.thresholds())
        return {signal: tuple(sorted(thresholds)) for signal, thresholds in found.items()}

    def active_rules(self, flow: Flow) -> tuple[Rule, ...]:
        return self.flow_rules[flow]

    def needed_signals(self, flow: Flow) -> frozenset[Signal]:
        """The signals some active rule of ``flow`` tests: only their sources are asked."""
        return self.flow_signals[flow]

    def thresholds(self, signal: Signal) -> tuple[float, ...]:
        """Every threshold the rules compare ``signal`` with (a carrier's tenure check needs them)."""
        return self.signal_thresholds.get(signal, ())


class InvalidPolicy(ValueError):
    """A policy document that cannot be used; the message names each bad entry."""


def _entry(location: tuple[Any, ...], document: Any) -> str:
    """``rules[12] (code 9135).when[0].below`` for a pydantic error location."""
    parts: list[str] = []
    node = document
    for part in location:
        if isinstance(part, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{part}]"]
            node = node[part] if isinstance(node, list) and part < len(node) else None
            if isinstance(node, dict) and "code" in node and len(parts) == 1:
                parts[-1] += f" (code {node['code']})"
        else:
            parts.append(str(part))
            node = node.get(part) if isinstance(node, dict) else None
    return ".".join(parts) or "policy"


def parse_policy(document: Any) -> Policy:
    """A validated policy from a parsed document (a mapping); raises ``InvalidPolicy`` naming entries."""
    if not isinstance(document, dict):
        raise InvalidPolicy("a policy must be a mapping with version, rules and assurance")
    try:
        return Policy.model_validate(document)
    except ValidationError as error:
        problems = [
            f"{_entry(tuple(e['loc']), document)}: {str(e['msg']).removeprefix('Value error, ')}"
            for e in error.errors()
        ]
        raise InvalidPolicy("invalid policy: " + "; ".join(problems)) from None
