"""The count of a pass proven: every active identity carries the pass's marker (its monitor state's
``passId``, read from the table as stored), was checked exactly once (its state saved once under the
pass), the signal source was asked once per identity and kind, and the pass's own totals say the
same number; else the bench fails, naming what is off."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.monitor_bench.tally import Tally
from phoneid.domain.enrollment import Status
from phoneid.domain.lists import phone_key
from phoneid.domain.signals import ListKind
from tests.harness import Api

# What the Sandbox monitor asks of each identity (phoneid.services.monitor: the lists and the plan).
ASKED_KINDS = (ListKind.PORT_EVENTS.value, ListKind.LINE_TYPES.value)


@dataclass(frozen=True)
class Proven:
    active: int  # active identities in the table
    marked: int  # of those, carrying the pass's marker
    checked: int  # the pass's total
    saves: int  # monitor states saved under the pass
    most_saves: int  # the most any identity was saved under it (1: nobody checked twice)
    asked: int  # lookups at the signal source
    most_asked: int


class CountMismatch(AssertionError):
    pass


def stored_identities(api: Api) -> list[dict[str, Any]]:
    """Every identity item as moto stores it (plain values), read beside the service."""
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[api.stack.account_id][api.stack.aws_region]
    table = backend.get_table(api.container.settings.enrollments_table)
    identities = []
    for item in table.all_items():
        values = {name: value.value for name, value in item.attrs.items() if name != "pii"}
        if values.get("kind") == "identity":
            identities.append(values)
    return identities


def prove(api: Api, pass_id: str, summary: dict[str, Any], tally: Tally) -> Proven:
    active = [v for v in stored_identities(api) if v.get("status") == Status.ACTIVE.value]
    marked = [v for v in active if json.loads(v.get("monitorState", "{}")).get("passId") == pass_id]
    saves = Counter({sid: n for (pid, sid), n in tally.checks.items() if pid == pass_id})
    wanted = Counter((kind, phone_key(v["phoneNumber"])) for v in active for kind in ASKED_KINDS)
    proven = Proven(
        active=len(active),
        marked=len(marked),
        checked=int(summary.get("checked", -1)),
        saves=sum(saves.values()),
        most_saves=max(saves.values(), default=0),
        asked=sum(tally.asked.values()),
        most_asked=max(tally.asked.values(), default=0),
    )
    problems = []
    if proven.marked != proven.active:
        problems.append(f"{proven.active - proven.marked} active identities without the pass's marker")
    if set(saves) != {v["serviceId"] for v in active} or proven.most_saves != 1:
        problems.append(
            f"checks saved: {proven.saves} for {len(saves)} identities, at most {proven.most_saves}"
        )
    if proven.checked != proven.active:
        problems.append(f"the pass counted {proven.checked} checked of {proven.active} active")
    if tally.asked != wanted:
        problems.append(f"the source was asked {proven.asked} times, at most {proven.most_asked} per key")
    if summary.get("segmentsDone") != summary.get("totalSegments") or not summary.get("finishedAt"):
        problems.append(f"the pass is not finished: {summary}")
    if problems:
        raise CountMismatch(f"pass {pass_id}: " + "; ".join(problems))
    return proven
