"""The change monitor's rules: what one pass saw of a number, compared with what the pass before saw.

Each pass observes a few facts of every active enrolled identity's number. A fact the pass could not
observe (its source failed, or the stack has no such source) is simply absent: it neither raises an
event nor replaces what was seen before. A fact seen for the first time is a baseline: it raises
nothing, so the first pass over a new identity sends nothing.

| Fact | Raises | When |
|---|---|---|
| ``simChange`` (latest SIM change) | ``SIM_SWAP`` | a change newer than the one seen before |
| ``port`` (latest port, port-events list) | ``PORT`` | a port newer than the one seen before |
| ``lineType`` (line-types list, else numbering plan) | ``LINE_TYPE_CHANGE`` | a different line type |
| ``recycled`` (since the enrollment date) | ``PHONE_NUMBER_CHANGE`` | false before, true now |
| ``reachable`` | ``DISCONNECT`` | reachable before, unreachable now |
| ``roaming`` (country roamed in) | ``MOVED_OUT_OF_COVERAGE`` | at home before, abroad now |

A broader line type and a narrower one of the same family are not a change: the numbering plan says
``fixed-or-mobile`` for every North American number and a registry may later say ``mobile``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from phoneid.domain.enrollment import Enrollment
from phoneid.domain.signals import ChangeEvent, ChangeKind
from phoneid.domain.webhooks import DESCRIPTIONS


class Fact(StrEnum):
    SIM_CHANGE = "simChange"  # ISO date-time of the latest SIM change, or None (none known)
    PORT = "port"  # ISO date-time of the latest port, or None
    LINE_TYPE = "lineType"  # a line type of phoneid.domain.lists
    RECYCLED = "recycled"  # bool: the subscriber changed since the enrollment date
    REACHABLE = "reachable"  # bool
    ROAMING = "roaming"  # ISO country the device roams in, or None (at home)


# Line types that only narrow a broader one: no event between them.
_FAMILIES: dict[str, frozenset[str]] = {
    "fixed-or-mobile": frozenset({"mobile", "landline"}),
    "voip": frozenset({"voip-fixed", "voip-nonfixed"}),
}


@dataclass(frozen=True)
class MonitorState:
    """What the monitor saw of one identity, saved on the identity after each pass."""

    facts: Mapping[str, Any] = field(default_factory=dict)  # Fact value -> JSON value
    checked_at: datetime | None = None
    pass_id: str | None = None  # the pass that checked it last: never twice in one pass


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    occurred_at: datetime
    description: str | None = None  # None: the kind's own description


def change_events(enrollment: Enrollment, changes: Iterable[Change]) -> list[ChangeEvent]:
    """Each change of an enrolled identity's number as the event logged and sent to its client's
    webhook, under an id of its own, whether a pass or the operator's push found it."""
    return [
        ChangeEvent(
            event_id=str(uuid.uuid4()),
            kind=change.kind,
            phone_number=enrollment.phone_number,
            occurred_at=change.occurred_at,
            client_id=enrollment.client_id,
            service_id=enrollment.service_id,
            client_customer_id=enrollment.client_customer_id,
            description=change.description or DESCRIPTIONS[change.kind],
        )
        for change in changes
    ]


def _moment(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _newer(before: Any, now: Any) -> datetime | None:
    """The moment ``now`` names when it is later than ``before`` (or ``before`` is None)."""
    current, previous = _moment(now), _moment(before)
    if current is None:
        return None
    return current if previous is None or current > previous else None


def _line_type_changed(before: Any, now: Any) -> bool:
    if before == now or "unknown" in (before, now) or None in (before, now):
        return False
    for broad, narrow in _FAMILIES.items():
        if (before == broad and now in narrow) or (now == broad and before in narrow):
            return False
    return True


def _abroad(country: Any, home: str) -> bool:
    return isinstance(country, str) and country.upper() != home.upper()


def compare(
    previous: MonitorState | None,
    observed: Mapping[Fact, Any],
    *,
    now: datetime,
    home_country: str,
) -> tuple[list[Change], MonitorState]:
    """The changes between the previous state and this pass's observations, and the state to save.

    ``observed`` holds only the facts this pass could observe.
    """
    before = dict(previous.facts) if previous is not None else {}
    changes: list[Change] = []
    for fact, value in observed.items():
        if fact.value not in before:
            continue  # first sight of this fact: the baseline
        old = before[fact.value]
        if fact in (Fact.SIM_CHANGE, Fact.PORT):
            moment = _newer(old, value)
            if moment is not None:
                kind = ChangeKind.SIM_SWAP if fact == Fact.SIM_CHANGE else ChangeKind.PORT
                changes.append(Change(kind, moment))
        elif fact == Fact.LINE_TYPE and _line_type_changed(old, value):
            described = f"The number's line type changed from {old} to {value}."
            changes.append(Change(ChangeKind.LINE_TYPE_CHANGE, now, described))
        elif fact == Fact.RECYCLED and value is True and old is False:
            changes.append(Change(ChangeKind.PHONE_NUMBER_CHANGE, now))
        elif fact == Fact.REACHABLE and value is False and old is True:
            changes.append(Change(ChangeKind.DISCONNECT, now))
        elif fact == Fact.ROAMING and _abroad(value, home_country) and not _abroad(old, home_country):
            changes.append(Change(ChangeKind.MOVED_OUT_OF_COVERAGE, now))
    facts = {**before, **{fact.value: value for fact, value in observed.items()}}
    # A narrower line type replaces a broader one; a broader one never replaces a narrower one.
    line_type = observed.get(Fact.LINE_TYPE)
    old_line_type = before.get(Fact.LINE_TYPE.value)
    if isinstance(old_line_type, str) and line_type in _FAMILIES and old_line_type in _FAMILIES[line_type]:
        facts[Fact.LINE_TYPE.value] = old_line_type
    return changes, MonitorState(facts=facts, checked_at=now)


def needs_baseline(state: MonitorState | None, status_changed_at: datetime | None) -> bool:
    """Whether to start over: never checked, or activated (or deactivated) since the last check,
    so that changes while an identity was inactive are not reported when it is active again."""
    if state is None or state.checked_at is None:
        return True
    return status_changed_at is not None and status_changed_at > state.checked_at
