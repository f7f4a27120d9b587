"""Gathering the fraud policy's signals for one request: every source the policy needs, at once.

Each source runs in a thread of its own with the policy's timeout for its kind; a source that fails
or is too slow gives ``SOURCE_FAILED`` for its signals, and the policy says whether that fails the
request (fail closed) or is skipped. Gathering ends by the policy's deadline whatever the sources do,
well inside API Gateway's 29 seconds.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from aws_lambda_powertools import Logger

from phoneid.domain import lists
from phoneid.domain.evaluation import SOURCE_FAILED, identity_observations
from phoneid.domain.identity import Address, Claimed, Identity, MatchResult, ssn_digits
from phoneid.domain.policy import Bounds, Flow, Policy, Signal, SourceName
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import Possession
from phoneid.domain.signals import ChangeKind, KycClaim, ListKind, NumberHistory
from phoneid.ports import (
    ActivityLog,
    CallForwardingSource,
    ChangeEventLog,
    Clock,
    CodeMac,
    DeviceStatusSource,
    IdentitySource,
    KycMatchSource,
    NumberHistorySource,
    NumberRecyclingSource,
    SignalLists,
    SimSwapSource,
    TenureSource,
)
from phoneid.services.pools import submit_in_context

logger = Logger(child=True)

_NUMBER_CHANGES = frozenset({ChangeKind.PHONE_NUMBER_CHANGE, ChangeKind.PORT, ChangeKind.SIM_SWAP})


@dataclass(frozen=True)
class Subject:
    """What one evaluation is about."""

    flow: Flow
    client_id: str
    phone_number: str | None
    possession: Possession | None = None
    key_mismatch: bool | None = None
    # The identity records: ``identity_checked`` says the flow already looked the number up.
    identity_checked: bool = False
    identity: Identity | None = None
    match: MatchResult | None = None
    claimed: Claimed | None = None
    email: str | None = None
    # Identity attributes that tie checks of different numbers together (customer id, email, ...).
    attributes: tuple[str, ...] = ()
    # False: only what the flow itself knows (possession, the key), no outside source is asked.
    ask_sources: bool = True


class Gatherer(Protocol):
    def gather(self, subject: Subject, policy: Policy) -> dict[Signal, Any]: ...


def flow_observations(subject: Subject) -> dict[Signal, Any]:
    """What the flow itself knows: possession, the device key and the identity match."""
    observed: dict[Signal, Any] = {}
    if subject.possession is not None:
        observed[Signal.POSSESSION] = subject.possession.value
    if subject.key_mismatch is not None:
        observed[Signal.KEY_MISMATCH] = subject.key_mismatch
    if subject.identity_checked and subject.claimed is not None:
        observed |= identity_observations(subject.identity is not None, subject.match)
    return observed


# --- production --------------------------------------------------------------------------------

_Task = Callable[[], Mapping[Signal, Any]]

_executor: concurrent.futures.ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    """One pool per container, made on first use (not at import)."""
    global _executor
    with _executor_lock:
        if _executor is None:
            # Enough for a batch's items (eight at a time) each asking every source at once.
            _executor = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="signals")
        return _executor


@dataclass
class SignalSources:
    """The ports behind the signals; a carrier port is None when the stack has no operator."""

    lists: SignalLists
    activity: ActivityLog
    change_events: ChangeEventLog
    history: NumberHistorySource
    identities: IdentitySource
    mac: CodeMac
    sim_swap: SimSwapSource | None = None
    call_forwarding: CallForwardingSource | None = None
    tenure: TenureSource | None = None
    recycling: NumberRecyclingSource | None = None
    kyc: KycMatchSource | None = None
    device_status: DeviceStatusSource | None = None


@dataclass
class _Request:
    """One gathering: memoised reads that several tasks share (the number's history, its identity)."""

    subject: Subject
    policy: Policy
    now: datetime
    sources: SignalSources
    wanted: frozenset[Signal]
    _memo: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def once(self, name: str, read: Callable[[], Any]) -> Any:
        with self._lock:
            if name not in self._memo:
                self._memo[name] = _Pending(read)
            pending = self._memo[name]
        return pending.value()


class _Pending:
    def __init__(self, read: Callable[[], Any]) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None

    def value(self) -> Any:
        with self._lock:
            if not self._done:
                try:
                    self._value = self._read()
                except BaseException as error:  # re-raised to every task that needs it
                    self._error = error
                self._done = True
        if self._error is not None:
            raise self._error
        return self._value


class SignalGatherer:
    def __init__(self, sources: SignalSources, clock: Clock) -> None:
        self._sources = sources
        self._clock = clock

    def gather(self, subject: Subject, policy: Policy) -> dict[Signal, Any]:
        observed = flow_observations(subject)
        if not subject.ask_sources or subject.phone_number is None:
            return observed
        needed = policy.needed_signals(subject.flow)
        wanted = _with_inputs(needed) - set(observed)
        request = _Request(subject, policy, self._clock.now(), self._sources, wanted)
        tasks = {
            source.name: source
            for source in _SOURCES
            if source.signals & wanted and (source.port is None or getattr(self._sources, source.port))
        }
        sourced = _run(request, tasks) | observed
        sourced |= _derived(sourced, needed)
        # What the flow knows stays whole (the assurance level reads it); sources only as needed.
        return observed | {signal: value for signal, value in sourced.items() if signal in needed}


_KYC_SIGNALS = frozenset(
    {
        Signal.KYC_NAME_MATCH,
        Signal.KYC_ELEMENTS_SUPPLIED,
        Signal.KYC_ELEMENTS_UNCONFIRMED,
        Signal.SECONDARY_SOURCE_MISMATCHES,
    }
)
_NUMBER_LIST_SIGNALS = frozenset(
    {
        Signal.PUBLIC_SMS,
        Signal.SIM_TRUST_SCORE,
        Signal.PORT_HOURS_AGO,
        Signal.BOT_LINKED,
        Signal.NUMBER_OWNER_DECEASED,
    }
)
_PERSON_LIST_SIGNALS = frozenset(
    {
        Signal.AML_LISTED,
        Signal.SSN_ISSUED_BEFORE_BIRTH,
        Signal.CLAIMED_ADDRESS_CORRECTIONAL,
        Signal.NUMBER_ADDRESS_CORRECTIONAL,
        Signal.IDENTITY_DECEASED,
    }
)
_RECORD_SIGNALS = frozenset({Signal.ACTIVE_IDENTITY, Signal.PARTNER_FINDINGS})
_HISTORY_SIGNALS = frozenset(
    {
        Signal.IDENTITIES_ON_NUMBER,
        Signal.SHORT_TENURE_IDENTITIES_ON_NUMBER,
        Signal.DAYS_SINCE_ASSOCIATION,
        Signal.DISCONNECT_SINCE_ASSOCIATION,
        Signal.NUMBER_CHANGE_EVENTS,
    }
)
_ACTIVITY_SIGNALS = frozenset(
    {Signal.PRIOR_ACTIVITY, Signal.RECENT_CHECKS, Signal.RECENT_CHECKS_SHARING_ATTRIBUTES}
)


def _run(request: _Request, sources: Mapping[str, _Source]) -> dict[Signal, Any]:
    """Every source at once; each waits at most its kind's timeout, and all together the deadline."""
    policy = request.policy
    started = time.monotonic()
    deadline = started + policy.sources.deadlineMs / 1000
    pool = _pool()
    futures = {name: submit_in_context(pool, source.read, request) for name, source in sources.items()}
    observed: dict[Signal, Any] = {}
    for name, source in sources.items():
        signals = source.signals & request.wanted
        limit = min(started + policy.sources.timeout_seconds(source.kind), deadline)
        try:
            answer = futures[name].result(timeout=max(0.0, limit - time.monotonic()))
        except Exception as error:  # a source's failure is an observation, not a failed request
            futures[name].cancel()
            logger.warning("signal source failed", extra={"source": name, "error_type": type(error).__name__})
            observed |= dict.fromkeys(signals, SOURCE_FAILED)
            continue
        observed |= {signal: value for signal, value in answer.items() if signal in signals}
    return observed


# Signals computed from others, and the others they need.
_DERIVED_FROM: Mapping[Signal, frozenset[Signal]] = {
    Signal.SOURCES_WITH_MISMATCH: frozenset({Signal.IDENTITY_MISMATCHES, Signal.SECONDARY_SOURCE_MISMATCHES}),
    Signal.ANY_INFORMATION: frozenset({Signal.ACTIVE_IDENTITY, Signal.PRIOR_ACTIVITY}),
}


def _with_inputs(needed: frozenset[Signal]) -> frozenset[Signal]:
    return needed.union(*(_DERIVED_FROM[signal] for signal in needed if signal in _DERIVED_FROM))


def _derived(observed: Mapping[Signal, Any], needed: frozenset[Signal]) -> dict[Signal, Any]:
    """Signals computed from others: how many sources disagree with the claim; whether anything at all
    is known of the number (an identity tied to it, or earlier checks)."""
    derived: dict[Signal, Any] = {}
    if Signal.ANY_INFORMATION in needed and Signal.ANY_INFORMATION not in observed:
        active, prior = observed.get(Signal.ACTIVE_IDENTITY), observed.get(Signal.PRIOR_ACTIVITY)
        if active is True or (isinstance(prior, int) and prior > 0):
            derived[Signal.ANY_INFORMATION] = True
        elif active is SOURCE_FAILED or prior is SOURCE_FAILED:
            derived[Signal.ANY_INFORMATION] = SOURCE_FAILED
        elif active is False and prior == 0:
            derived[Signal.ANY_INFORMATION] = False
    if Signal.SOURCES_WITH_MISMATCH in needed and Signal.SOURCES_WITH_MISMATCH not in observed:
        parts = [observed.get(Signal.IDENTITY_MISMATCHES), observed.get(Signal.SECONDARY_SOURCE_MISMATCHES)]
        if any(part is SOURCE_FAILED for part in parts):
            derived[Signal.SOURCES_WITH_MISMATCH] = SOURCE_FAILED
        elif any(isinstance(part, int) for part in parts):
            derived[Signal.SOURCES_WITH_MISMATCH] = sum(
                1 for part in parts if isinstance(part, int) and part > 0
            )
    return derived


# --- tasks ----------------------------------------------------------------------------------------


def _phone(request: _Request) -> str:
    assert request.subject.phone_number is not None
    return request.subject.phone_number


def _hours_since(now: datetime, moment: datetime | None) -> float | None:
    return None if moment is None else max(0.0, (now - moment).total_seconds() / 3600)


def _sim_swap(request: _Request) -> dict[Signal, Any]:
    assert request.sources.sim_swap is not None
    latest = request.sources.sim_swap.latest_change(_phone(request))
    return {Signal.SIM_SWAP_HOURS_AGO: _hours_since(request.now, latest)}


def _call_forwarding(request: _Request) -> dict[Signal, Any]:
    assert request.sources.call_forwarding is not None
    return {Signal.CALL_FORWARDING: request.sources.call_forwarding.unconditional(_phone(request))}


def _tenure(request: _Request) -> dict[Signal, Any]:
    """The carrier answers "held since date D?"; ask it once per threshold the policy compares with."""
    assert request.sources.tenure is not None
    today = request.now.date()
    answers = {
        days: request.sources.tenure.held_since(_phone(request), today - timedelta(days=days))
        for days in request.policy.thresholds(Signal.TENURE_DAYS)
    }
    return {Signal.TENURE_DAYS: Bounds(answers)}


def _history(request: _Request) -> NumberHistory:
    window = timedelta(days=request.policy.windows.shortTenureDays)
    history: NumberHistory = request.once(
        "history",
        lambda: request.sources.history.history(
            request.subject.client_id, _phone(request), request.now - window
        ),
    )
    return history


def _recycling(request: _Request) -> dict[Signal, Any]:
    """Recycled since the number was first tied to an identity here; nothing to ask without one."""
    assert request.sources.recycling is not None
    first = _history(request).first_associated
    if first is None:
        return {}
    return {Signal.NUMBER_RECYCLED: request.sources.recycling.recycled_since(_phone(request), first)}


def _claim(subject: Subject) -> KycClaim:
    claimed = subject.claimed or Claimed()
    address = claimed.addresses[0] if claimed.addresses else Address()
    return KycClaim(
        given_name=claimed.first_name,
        family_name=claimed.last_name,
        birthdate=claimed.dob if claimed.dob and len(claimed.dob) == 10 else None,
        id_document=claimed.ssn if claimed.ssn and len(ssn_digits(claimed.ssn)) == 9 else None,
        address=address.address,
        postal_code=address.postal_code,
        locality=address.city,
        region=address.region,
        email=subject.email,
    )


def _kyc(request: _Request) -> dict[Signal, Any]:
    assert request.sources.kyc is not None
    claim = _claim(request.subject)
    if not claim.supplied():
        return {Signal.KYC_ELEMENTS_SUPPLIED: 0, Signal.KYC_ELEMENTS_UNCONFIRMED: 0}
    result = request.sources.kyc.match(_phone(request), claim)
    # Only what the operator answered counts: "not_available" confirms nothing and denies nothing.
    answered = {element: answer for element, answer in result.elements().items() if answer != "not_available"}
    observed: dict[Signal, Any] = {
        Signal.KYC_ELEMENTS_SUPPLIED: len(answered),
        Signal.KYC_ELEMENTS_UNCONFIRMED: sum(1 for answer in answered.values() if answer == "false"),
        # The person's own attributes (birth date, SSN, address) disagreeing: identification.
        Signal.SECONDARY_SOURCE_MISMATCHES: sum(
            1 for element, answer in answered.items() if element != "name" and answer == "false"
        ),
    }
    if result.name is not None:
        observed[Signal.KYC_NAME_MATCH] = result.name
    return observed


def _reachability(request: _Request) -> dict[Signal, Any]:
    assert request.sources.device_status is not None
    return {Signal.NETWORK_REACHABLE: request.sources.device_status.reachable(_phone(request))}


def _line_type(request: _Request) -> dict[Signal, Any]:
    phone = _phone(request)
    entry = request.sources.lists.lookup(ListKind.LINE_TYPES, [lists.phone_key(phone)]).get(
        lists.phone_key(phone)
    )
    registered = entry.values.get("lineType") if entry else None
    return {
        Signal.LINE_TYPE_REGISTRY: registered,
        Signal.LINE_TYPE: registered or lists.number_line_type(phone),
    }


def _number_lists(request: _Request) -> dict[Signal, Any]:
    wanted = request.wanted
    phone = lists.phone_key(_phone(request))
    look = request.sources.lists.lookup
    observed: dict[Signal, Any] = {}
    if Signal.PUBLIC_SMS in wanted:
        observed[Signal.PUBLIC_SMS] = phone in look(ListKind.PUBLIC_SMS, [phone])
    if Signal.BOT_LINKED in wanted:
        observed[Signal.BOT_LINKED] = phone in look(ListKind.BOT_NUMBERS, [phone])
    if Signal.NUMBER_OWNER_DECEASED in wanted:
        observed[Signal.NUMBER_OWNER_DECEASED] = phone in look(ListKind.DECEASED, [phone])
    if Signal.SIM_TRUST_SCORE in wanted:
        trust = look(ListKind.SIM_TRUST, [phone]).get(phone)
        observed[Signal.SIM_TRUST_SCORE] = trust.values.get("score") if trust else None
    if Signal.PORT_HOURS_AGO in wanted:
        port = look(ListKind.PORT_EVENTS, [phone]).get(phone)
        ported = datetime.fromisoformat(str(port.values["portedAt"])) if port else None
        observed[Signal.PORT_HOURS_AGO] = _hours_since(request.now, ported)
    return observed


def _person(request: _Request) -> tuple[Claimed, Identity | None]:
    """The claimed person, and the identity records of the number (looked up once)."""
    subject = request.subject
    if subject.identity_checked:
        record = subject.identity
    else:
        record = request.once("identity", lambda: request.sources.identities.find(_phone(request)))
    return subject.claimed or Claimed(), record


def _person_lists(request: _Request) -> dict[Signal, Any]:
    wanted = request.wanted
    claimed, record = _person(request)
    look = request.sources.lists.lookup
    observed: dict[Signal, Any] = {}
    first = claimed.first_name or (record.first_name if record else None)
    last = claimed.last_name or (record.last_name if record else None)
    full_dob = claimed.dob if claimed.dob and len(claimed.dob) == 10 else (record.dob if record else None)
    ssn = ssn_digits(claimed.ssn) if claimed.ssn and len(ssn_digits(claimed.ssn)) == 9 else None
    ssn = ssn or (record.ssn if record else None)
    if Signal.AML_LISTED in wanted and first and last:
        keys = lists.name_key(first, last, full_dob)
        observed[Signal.AML_LISTED] = bool(look(ListKind.AML, keys))
    if Signal.SSN_ISSUED_BEFORE_BIRTH in wanted and ssn and full_dob:
        group = lists.ssn_area_group(ssn)
        issuance = look(ListKind.SSN_ISSUANCE, [group]).get(group)
        # Numbers of an area and group were issued between issuedFrom and issuedTo: when the last
        # of them went out before the birth date, this SSN was issued before its holder was born.
        issued_by = issuance.values.get("issuedTo") if issuance else None
        observed[Signal.SSN_ISSUED_BEFORE_BIRTH] = issued_by is not None and str(issued_by) < full_dob
    if Signal.IDENTITY_DECEASED in wanted and ssn:
        key = request.sources.mac.digest(lists.ssn_mac_input(ssn))
        observed[Signal.IDENTITY_DECEASED] = key in look(ListKind.DECEASED, [key])
    if Signal.CLAIMED_ADDRESS_CORRECTIONAL in wanted and claimed.addresses:
        observed[Signal.CLAIMED_ADDRESS_CORRECTIONAL] = _correctional(look, claimed.addresses)
    if Signal.NUMBER_ADDRESS_CORRECTIONAL in wanted and record is not None and record.addresses:
        observed[Signal.NUMBER_ADDRESS_CORRECTIONAL] = _correctional(look, record.addresses)
    return observed


def _correctional(
    look: Callable[[ListKind, list[str]], Mapping[str, Any]], addresses: Iterable[Address]
) -> bool:
    keys = [
        key
        for a in addresses
        if a.address
        for key in lists.address_keys(a.address, a.postal_code, a.city, a.region)
    ]
    return bool(keys) and bool(look(ListKind.CORRECTIONAL_ADDRESSES, keys))


def _records(request: _Request) -> dict[Signal, Any]:
    """Whether anything ties an identity to the number: the identity records or Identity Manager."""
    _, record = _person(request)
    history = _history(request)
    return {
        Signal.ACTIVE_IDENTITY: record is not None or history.identities > 0,
        Signal.PARTNER_FINDINGS: frozenset(record.reputation_reasons if record else ()),
    }


def _history_signals(request: _Request) -> dict[Signal, Any]:
    subject, now, windows = request.subject, request.now, request.policy.windows
    history = _history(request)
    observed: dict[Signal, Any] = {
        Signal.IDENTITIES_ON_NUMBER: history.identities,
        Signal.SHORT_TENURE_IDENTITIES_ON_NUMBER: history.short_tenure_identities,
    }
    since = now - timedelta(days=max(windows.numberChangeDays, windows.historyDays))
    events = request.sources.change_events.since(subject.client_id, _phone(request), since)
    change_since = now - timedelta(days=windows.numberChangeDays)
    observed[Signal.NUMBER_CHANGE_EVENTS] = sum(
        1 for e in events if e.kind in _NUMBER_CHANGES and e.occurred_at >= change_since
    )
    if history.last_associated is not None:
        associated = history.last_associated
        observed[Signal.DAYS_SINCE_ASSOCIATION] = (now - associated).days
        observed[Signal.DISCONNECT_SINCE_ASSOCIATION] = any(
            e.kind == ChangeKind.DISCONNECT and e.occurred_at > associated for e in events
        )
    return observed


def _activity(request: _Request) -> dict[Signal, Any]:
    """Checks before this one (then this one is recorded): the risk signals' own data."""
    subject, now, windows = request.subject, request.now, request.policy.windows
    log = request.sources.activity
    counts = log.counts(
        subject.client_id,
        _phone(request),
        subject.attributes,
        recent_since=now - timedelta(hours=windows.recentActivityHours),
        history_since=now - timedelta(days=windows.historyDays),
    )
    log.record(subject.client_id, _phone(request), subject.attributes, now)
    return {
        Signal.PRIOR_ACTIVITY: counts.prior,
        Signal.RECENT_CHECKS: counts.recent,
        Signal.RECENT_CHECKS_SHARING_ATTRIBUTES: counts.recent_sharing_attributes,
    }


@dataclass(frozen=True)
class _Source:
    """One source of signals: what it answers, how long it may take, and the port it needs."""

    name: str
    kind: SourceName
    signals: frozenset[Signal]
    read: Callable[[_Request], Mapping[Signal, Any]]
    port: str | None = None  # the SignalSources port that must be configured (the carrier's)


_SOURCES: tuple[_Source, ...] = (
    _Source("sim-swap", "carrier", frozenset({Signal.SIM_SWAP_HOURS_AGO}), _sim_swap, "sim_swap"),
    _Source(
        "call-forwarding", "carrier", frozenset({Signal.CALL_FORWARDING}), _call_forwarding, "call_forwarding"
    ),
    _Source("tenure", "carrier", frozenset({Signal.TENURE_DAYS}), _tenure, "tenure"),
    _Source("recycling", "carrier", frozenset({Signal.NUMBER_RECYCLED}), _recycling, "recycling"),
    _Source("kyc-match", "carrier", _KYC_SIGNALS, _kyc, "kyc"),
    _Source("reachability", "carrier", frozenset({Signal.NETWORK_REACHABLE}), _reachability, "device_status"),
    _Source("line-type", "lists", frozenset({Signal.LINE_TYPE, Signal.LINE_TYPE_REGISTRY}), _line_type),
    _Source("number-lists", "lists", _NUMBER_LIST_SIGNALS, _number_lists),
    _Source("person-lists", "lists", _PERSON_LIST_SIGNALS, _person_lists),
    _Source("identity-records", "records", _RECORD_SIGNALS, _records),
    _Source("history", "records", _HISTORY_SIGNALS, _history_signals),
    _Source("activity", "records", _ACTIVITY_SIGNALS, _activity),
)


# --- Sandbox ---------------------------------------------------------------------------------------

# What a Sandbox test user's sources say unless the user's script says otherwise: nothing notable.
SANDBOX_DEFAULTS: Mapping[Signal, Any] = {
    Signal.SIM_SWAP_HOURS_AGO: None,
    Signal.CALL_FORWARDING: False,
    Signal.TENURE_DAYS: 3650,
    Signal.NUMBER_RECYCLED: False,
    Signal.KYC_ELEMENTS_SUPPLIED: 0,
    Signal.KYC_ELEMENTS_UNCONFIRMED: 0,
    Signal.SECONDARY_SOURCE_MISMATCHES: 0,
    Signal.NETWORK_REACHABLE: True,
    Signal.LINE_TYPE: "mobile",
    Signal.LINE_TYPE_REGISTRY: None,
    Signal.PUBLIC_SMS: False,
    Signal.SIM_TRUST_SCORE: 90,
    Signal.PORT_HOURS_AGO: None,
    Signal.BOT_LINKED: False,
    Signal.AML_LISTED: False,
    Signal.SSN_ISSUED_BEFORE_BIRTH: False,
    Signal.CLAIMED_ADDRESS_CORRECTIONAL: False,
    Signal.NUMBER_ADDRESS_CORRECTIONAL: False,
    Signal.IDENTITY_DECEASED: False,
    Signal.NUMBER_OWNER_DECEASED: False,
    Signal.IDENTITIES_ON_NUMBER: 1,
    Signal.SHORT_TENURE_IDENTITIES_ON_NUMBER: 0,
    Signal.DISCONNECT_SINCE_ASSOCIATION: False,
    Signal.NUMBER_CHANGE_EVENTS: 0,
    Signal.PRIOR_ACTIVITY: 12,
    Signal.RECENT_CHECKS: 0,
    Signal.RECENT_CHECKS_SHARING_ATTRIBUTES: 0,
    Signal.ACTIVE_IDENTITY: True,
}


class ScriptedSignals:
    """Sandbox: each test user's signals are scripted in the catalogue; the same policy evaluates them,
    so every reason code can be seen without configuring anything."""

    def __init__(self, catalogue: Catalogue) -> None:
        self._catalogue = catalogue

    def gather(self, subject: Subject, policy: Policy) -> dict[Signal, Any]:
        observed = flow_observations(subject)
        if not subject.ask_sources:
            return observed
        user = self._catalogue.find(subject.phone_number)
        script = user.observations if user else {}
        needed = policy.needed_signals(subject.flow)
        for signal in _with_inputs(needed) - set(observed):
            if signal in SANDBOX_DEFAULTS:
                observed[signal] = SANDBOX_DEFAULTS[signal]
        # The script speaks for the user's sources, and for the identity records too.
        observed |= {s: v for s, v in script.items() if s not in (Signal.POSSESSION, Signal.KEY_MISMATCH)}
        observed |= _derived(observed, needed)
        return observed
