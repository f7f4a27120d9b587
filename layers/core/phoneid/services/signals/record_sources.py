"""PhoneID's own records as sources: the identity tied to the number, the number's history in
Identity Manager and its change events, and the checks made before this one."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from phoneid.domain.policy import Signal
from phoneid.domain.signals import ChangeKind
from phoneid.services.signals.request import Request
from phoneid.services.signals.source import OwnSource, Source

_NUMBER_CHANGES = frozenset({ChangeKind.PHONE_NUMBER_CHANGE, ChangeKind.PORT, ChangeKind.SIM_SWAP})
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


def _records(request: Request) -> dict[Signal, Any]:
    """Whether anything ties an identity to the number: the identity records or Identity Manager."""
    _, record = request.person()
    history = request.history()
    return {
        Signal.ACTIVE_IDENTITY: record is not None or history.identities > 0,
        Signal.PARTNER_FINDINGS: frozenset(record.reputation_reasons if record else ()),
    }


def _history(request: Request) -> dict[Signal, Any]:
    subject, now, windows = request.subject, request.now, request.policy.windows
    history = request.history()
    observed: dict[Signal, Any] = {
        Signal.IDENTITIES_ON_NUMBER: history.identities,
        Signal.SHORT_TENURE_IDENTITIES_ON_NUMBER: history.short_tenure_identities,
    }
    since = now - timedelta(days=max(windows.numberChangeDays, windows.historyDays))
    events = request.sources.change_events.since(subject.client_id, request.phone, since)
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


def _activity(request: Request) -> dict[Signal, Any]:
    """Checks before this one (then this one is recorded): the risk signals' own data."""
    subject, now, windows = request.subject, request.now, request.policy.windows
    log = request.sources.activity
    counts = log.counts(
        subject.client_id,
        request.phone,
        subject.attributes,
        recent_since=now - timedelta(hours=windows.recentActivityHours),
        history_since=now - timedelta(days=windows.historyDays),
    )
    log.record(subject.client_id, request.phone, subject.attributes, now)
    return {
        Signal.PRIOR_ACTIVITY: counts.prior,
        Signal.RECENT_CHECKS: counts.recent,
        Signal.RECENT_CHECKS_SHARING_ATTRIBUTES: counts.recent_sharing_attributes,
    }


RECORD_SOURCES: tuple[Source, ...] = (
    OwnSource("identity-records", "records", _RECORD_SIGNALS, _records),
    OwnSource("history", "records", _HISTORY_SIGNALS, _history),
    OwnSource("activity", "records", _ACTIVITY_SIGNALS, _activity),
)
