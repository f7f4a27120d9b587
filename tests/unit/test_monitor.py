"""The change monitor in memory: the comparison rules, and passes over enrolled identities with
scripted sources, a change-event log, a queue and monitor states."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any

import pytest

from phoneid.domain.enrollment import Action, Enrollment, new_service_id
from phoneid.domain.monitor import Fact, MonitorState, compare, needs_baseline
from phoneid.domain.signals import ChangeKind, ListEntry, ListKind, SignalSourceError
from phoneid.services.clients import ClientAdmin
from phoneid.services.monitor import ChangeMonitor, MonitorSources, PageReport
from tests.fakes import (
    START,
    ContextCipher,
    FakeClock,
    InMemoryChangeEventLog,
    InMemoryClientStore,
    InMemoryEnrollmentStore,
    InMemoryMonitorStates,
    InMemorySignalLists,
    InMemoryWebhookQueue,
)

EARLIER = START - timedelta(days=3)


def state(**facts: Any) -> MonitorState:
    return MonitorState(facts={Fact(name).value: value for name, value in facts.items()}, checked_at=EARLIER)


# --- the rules ------------------------------------------------------------------------------------


def test_facts_seen_for_the_first_time_are_a_baseline_and_raise_nothing() -> None:
    # Given no state yet, and a number with a known SIM change and roaming abroad
    observed = {Fact.SIM_CHANGE: EARLIER.isoformat(), Fact.ROAMING: "FR", Fact.REACHABLE: False}

    # When compared
    changes, saved = compare(None, observed, now=START, home_country="US")

    # Then nothing is raised and every fact is kept
    assert changes == []
    assert saved.facts == {"simChange": EARLIER.isoformat(), "roaming": "FR", "reachable": False}
    assert saved.checked_at == START


@pytest.mark.parametrize(
    ("before", "now", "kind", "occurred"),
    [
        ({"simChange": None}, {Fact.SIM_CHANGE: EARLIER.isoformat()}, ChangeKind.SIM_SWAP, EARLIER),
        (
            {"simChange": (EARLIER - timedelta(days=9)).isoformat()},
            {Fact.SIM_CHANGE: EARLIER.isoformat()},
            ChangeKind.SIM_SWAP,
            EARLIER,
        ),
        ({"port": None}, {Fact.PORT: EARLIER.isoformat()}, ChangeKind.PORT, EARLIER),
        ({"lineType": "mobile"}, {Fact.LINE_TYPE: "voip-nonfixed"}, ChangeKind.LINE_TYPE_CHANGE, START),
        ({"recycled": False}, {Fact.RECYCLED: True}, ChangeKind.PHONE_NUMBER_CHANGE, START),
        ({"reachable": True}, {Fact.REACHABLE: False}, ChangeKind.DISCONNECT, START),
        ({"roaming": None}, {Fact.ROAMING: "MX"}, ChangeKind.MOVED_OUT_OF_COVERAGE, START),
        ({"roaming": "US"}, {Fact.ROAMING: "CA"}, ChangeKind.MOVED_OUT_OF_COVERAGE, START),
    ],
)
def test_each_change_raises_its_event(
    before: dict[str, Any], now: Mapping[Fact, Any], kind: ChangeKind, occurred: datetime
) -> None:
    changes, _ = compare(state(**before), now, now=START, home_country="US")

    assert [(c.kind, c.occurred_at) for c in changes] == [(kind, occurred)]


@pytest.mark.parametrize(
    ("before", "now"),
    [
        ({"simChange": EARLIER.isoformat()}, {Fact.SIM_CHANGE: EARLIER.isoformat()}),  # the same change
        ({"simChange": EARLIER.isoformat()}, {Fact.SIM_CHANGE: None}),  # the operator forgot it
        ({"lineType": "fixed-or-mobile"}, {Fact.LINE_TYPE: "mobile"}),  # narrower, same family
        ({"lineType": "mobile"}, {Fact.LINE_TYPE: "fixed-or-mobile"}),
        ({"lineType": "voip"}, {Fact.LINE_TYPE: "voip-fixed"}),
        ({"recycled": True}, {Fact.RECYCLED: True}),  # reported once
        ({"reachable": False}, {Fact.REACHABLE: False}),
        ({"reachable": False}, {Fact.REACHABLE: True}),
        ({"roaming": "FR"}, {Fact.ROAMING: "DE"}),  # still abroad
        ({"roaming": None}, {Fact.ROAMING: "US"}),  # national roaming is at home
        ({"simChange": None}, {}),  # the source failed: nothing observed
    ],
)
def test_what_is_not_a_change_raises_nothing(before: dict[str, Any], now: Mapping[Fact, Any]) -> None:
    changes, _ = compare(state(**before), now, now=START, home_country="US")

    assert changes == []


def test_an_unobserved_fact_keeps_its_previous_value_and_a_broader_line_type_never_replaces_a_narrower() -> (
    None
):
    _, saved = compare(
        state(simChange=EARLIER.isoformat(), lineType="mobile"),
        {Fact.LINE_TYPE: "fixed-or-mobile"},
        now=START,
        home_country="US",
    )

    assert saved.facts == {"simChange": EARLIER.isoformat(), "lineType": "mobile"}


def test_an_identity_activated_or_deactivated_since_the_last_check_starts_over() -> None:
    assert needs_baseline(None, None)
    assert needs_baseline(state(), EARLIER + timedelta(minutes=1))
    assert not needs_baseline(state(), EARLIER - timedelta(minutes=1))
    assert not needs_baseline(state(), None)


# --- passes ---------------------------------------------------------------------------------------


class Carrier:
    """Scripted carrier answers per number; a source named in ``failing`` raises."""

    def __init__(self) -> None:
        self.sim: dict[str, datetime | None] = {}
        self.recycled_after: dict[str, date] = {}
        self.unreachable: set[str] = set()
        self.roaming: dict[str, str] = {}
        self.failing: set[str] = set()

    def _fail(self, source: str) -> None:
        if source in self.failing:
            raise SignalSourceError(f"{source} down")

    def latest_change(self, phone_number: str) -> datetime | None:
        self._fail("sim-swap")
        return self.sim.get(phone_number)

    def recycled_since(self, phone_number: str, since: date) -> bool:
        self._fail("recycling")
        changed = self.recycled_after.get(phone_number)
        return changed is not None and changed > since

    def reachable(self, phone_number: str) -> bool:
        self._fail("reachability")
        return phone_number not in self.unreachable

    def roaming_country(self, phone_number: str) -> str | None:
        self._fail("roaming")
        return self.roaming.get(phone_number)


class World:
    def __init__(self, *, carrier: bool = True) -> None:
        self.clock = FakeClock()
        self.enrollments = InMemoryEnrollmentStore()
        self.states = InMemoryMonitorStates(self.enrollments)
        self.lists = InMemorySignalLists()
        self.carrier = Carrier()
        self.log = InMemoryChangeEventLog()
        self.queue = InMemoryWebhookQueue()
        self.clients = InMemoryClientStore()
        self.admin = ClientAdmin(self.clients, self.clock, "production", "US", cipher=ContextCipher())
        self.monitor = ChangeMonitor(
            states=self.states,
            sources=MonitorSources(
                lists=self.lists,
                sim_swap=self.carrier if carrier else None,
                recycling=self.carrier if carrier else None,
                device_status=self.carrier if carrier else None,
            ),
            change_events=self.log,
            queue=self.queue,
            clients=self.clients,
            clock=self.clock,
            workers=2,
        )

    def client(self, *, webhook: bool = True) -> str:
        client_id = self.admin.create().client.client_id
        if webhook:
            self.admin.set_webhook(client_id, "https://hooks.example.com/phoneid")
        return client_id

    def enroll(self, client_id: str, phone: str, country: str = "US", **fields: Any) -> Enrollment:
        enrollment = Enrollment(
            client_id=client_id,
            service_id=new_service_id(),
            phone_number=phone,
            country=country,
            created_at=self.clock.now() - timedelta(days=30),
            **fields,
        )
        self.enrollments.enroll(enrollment)
        return enrollment

    def next_pass(self) -> PageReport:
        """A pass an hour after the last, over one page of every active identity."""
        self.clock.advance(hours=1)
        active = [e for e in self.enrollments.items.values() if e.active]
        return self.monitor.check_page(
            active, pass_id=self.clock.now().isoformat(), started_at=self.clock.now()
        )


def test_the_first_pass_records_the_baseline_and_sends_nothing() -> None:
    # Given an enrolled identity whose SIM changed before it was first checked
    world = World()
    alice = world.enroll(world.client(), "+12025550101")
    world.carrier.sim["+12025550101"] = START - timedelta(days=2)

    # When the first pass runs
    report = world.next_pass()

    # Then the identity was checked, nothing was found, and its baseline is saved
    assert (report.checked, report.events, report.late) == (1, 0, 0)
    assert world.queue.sent == []
    saved = world.states.monitor_state(alice.client_id, alice.service_id)
    assert saved is not None
    assert saved.facts["simChange"] == (START - timedelta(days=2)).isoformat()
    assert saved.facts["lineType"] == "fixed-or-mobile"
    assert saved.facts["reachable"] is True


def test_a_new_sim_change_becomes_one_logged_and_queued_event_per_identity() -> None:
    # Given two identities of one client on one number, and another number, after a first pass
    world = World()
    client = world.client()
    first = world.enroll(client, "+12025550102", client_customer_id="c-1")
    second = world.enroll(client, "+12025550102", client_customer_id="c-2")
    world.enroll(client, "+12025550103")
    world.next_pass()

    # When the number's SIM changes and the next pass runs
    swapped = world.clock.now()
    world.carrier.sim["+12025550102"] = swapped
    report = world.next_pass()

    # Then each identity of the number gets a SIM_SWAP with its own random id; the log counts the
    # number's change once
    assert report.events == 2
    assert report.queued == 2
    assert {(e.service_id, e.kind, e.occurred_at, e.client_customer_id) for e in world.queue.sent} == {
        (first.service_id, ChangeKind.SIM_SWAP, swapped, "c-1"),
        (second.service_id, ChangeKind.SIM_SWAP, swapped, "c-2"),
    }
    assert len({e.event_id for e in world.queue.sent}) == 2
    assert [e.kind for e in world.log.since(client, "+12025550102", START)] == [ChangeKind.SIM_SWAP]

    # And a third pass finds nothing new
    assert world.next_pass().events == 0


def test_inactive_identities_are_not_checked_and_start_over_when_activated() -> None:
    # Given an identity deactivated after its baseline
    world = World()
    alice = world.enroll(world.client(), "+12025550104")
    world.next_pass()
    world.enrollments.apply(alice.client_id, alice.service_id, Action.DEACTIVATE, world.clock.now())

    # When its SIM changes while it is inactive
    world.carrier.sim["+12025550104"] = world.clock.now()
    inactive = world.next_pass()
    world.enrollments.apply(alice.client_id, alice.service_id, Action.ACTIVATE, world.clock.now())
    reactivated = world.next_pass()

    # Then no pass sends an event for it: the change happened before it was active again
    assert inactive.checked == 0
    assert reactivated.events == 0
    assert world.queue.sent == []


def test_a_client_without_webhook_has_its_events_logged_but_not_queued() -> None:
    world = World()
    client = world.client(webhook=False)
    world.enroll(client, "+12025550105")
    world.next_pass()
    world.carrier.unreachable.add("+12025550105")

    report = world.next_pass()

    assert (report.events, report.queued) == (1, 0)
    assert world.queue.sent == []
    assert [e.kind for e in world.log.since(client, "+12025550105", START)] == [ChangeKind.DISCONNECT]


def test_a_failing_source_is_skipped_and_never_raises_an_event() -> None:
    # Given a baseline, then the SIM swap and reachability sources failing
    world = World()
    alice = world.enroll(world.client(), "+12025550106")
    world.carrier.sim["+12025550106"] = START - timedelta(days=400)
    world.next_pass()
    world.carrier.failing |= {"sim-swap", "reachability"}

    # When passes run while they fail, then once they answer again with nothing new
    failing = world.next_pass()
    world.carrier.failing.clear()
    recovered = world.next_pass()

    # Then nothing is raised, and the baseline survived the failure
    assert (failing.events, recovered.events) == (0, 0)
    saved = world.states.monitor_state(alice.client_id, alice.service_id)
    assert saved is not None
    assert saved.facts["simChange"] == (START - timedelta(days=400)).isoformat()


def test_numbers_outside_the_us_are_not_monitored() -> None:
    world = World()
    world.enroll(world.client(), "+14165550107", country="CA")

    report = world.next_pass()

    assert (report.checked, report.skipped) == (0, 1)


def test_a_sandbox_stack_uses_only_the_lists_and_the_numbering_plan() -> None:
    # Given a stack without carrier sources and an identity's baseline
    world = World(carrier=False)
    client = world.client()
    world.enroll(client, "+12025550108")
    world.next_pass()

    # When the operator imports a port and a VoIP line type for the number
    ported = world.clock.now() - timedelta(hours=3)
    world.lists.put_many(
        [
            ListEntry(ListKind.PORT_EVENTS, "+12025550108", {"portedAt": ported.isoformat()}),
            ListEntry(ListKind.LINE_TYPES, "+12025550108", {"lineType": "voip-nonfixed"}),
        ]
    )
    report = world.next_pass()

    # Then the pass raises PORT (when it happened) and LINE_TYPE_CHANGE
    assert report.events == 2
    assert {(e.kind, e.occurred_at) for e in world.queue.sent} == {
        (ChangeKind.PORT, ported),
        (ChangeKind.LINE_TYPE_CHANGE, world.clock.now()),
    }
    line_type = next(e for e in world.queue.sent if e.kind == ChangeKind.LINE_TYPE_CHANGE)
    assert line_type.description == "The number's line type changed from fixed-or-mobile to voip-nonfixed."


def test_a_page_short_of_time_leaves_its_identities_late() -> None:
    world = World()
    alice = world.enroll(world.client(), "+12025550109")

    report = world.monitor.check_page(
        [alice], pass_id="p1", started_at=world.clock.now(), time_left=lambda: 5.0
    )

    assert (report.checked, report.late) == (0, 1)
    assert world.states.monitor_state(alice.client_id, alice.service_id) is None
