"""The monitor's pass as a workflow, in memory: segments planned from the table's size, each segment
checked page by page and continued where it stopped, a failed or stopped pass resumed without
checking any identity twice, and the pass's totals. Time is the FakeClock's: each check takes a second."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable

import pytest

from phoneid.domain.enrollment import Action
from phoneid.domain.monitor import MonitorState
from phoneid.domain.monitor_pass import MIN_SEGMENTS, plan_segments
from phoneid.services.monitor_passes import MonitorPasses
from tests.fakes import START, InMemoryMonitorPasses
from tests.unit.test_monitor import World

PASS = "2026-03-02T06:00:00Z"


class TimedWorld(World):
    """Each identity's check (its state saved) takes one second of the clock; saves are counted."""

    def __init__(self, *, segments: int = 4, page_size: int = 5) -> None:
        super().__init__()
        self.saves: Counter[str] = Counter()
        self.passes = InMemoryMonitorPasses()
        saving = self.states.save_monitor_state

        def timed_save(client_id: str, service_id: str, state: MonitorState) -> bool:
            self.clock.advance(seconds=1)
            self.saves[service_id] += 1
            return saving(client_id, service_id, state)

        self.states.save_monitor_state = timed_save  # type: ignore[method-assign]
        self.workflow = MonitorPasses(
            monitor=self.monitor,
            enrollments=self.enrollments,
            passes=self.passes,
            clock=self.clock,
            max_segments=segments,
            page_size=page_size,
        )

    def identities(self, count: int) -> list[str]:
        client = self.client(webhook=False)
        return [self.enroll(client, f"+1202555{index:04d}").service_id for index in range(count)]

    def invocation(self, seconds: float) -> Callable[[], float]:
        """An invocation's time left, ending ``seconds`` from now on the clock."""
        deadline = self.clock.now().timestamp() + seconds
        return lambda: deadline - self.clock.now().timestamp()

    def run_segment(self, segment: int, seconds: float = 900) -> int:
        """The workflow's loop over one segment: invocations until it is done; how many it took."""
        invocations = 0
        while True:
            invocations += 1
            if self.workflow.check_segment(PASS, segment, self.invocation(seconds)).progress.done:
                return invocations


# --- the plan -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "maximum", "segments"),
    [
        (0, 256, MIN_SEGMENTS),  # a count DynamoDB has not computed yet still spreads the work
        (300_000, 256, MIN_SEGMENTS),
        (10_000_000, 256, 256),  # bounded by the stack's maximum
        (1_000_000, 1000, 40),  # 25,000 identities a segment
        (1_000_000, 4, 4),
        (1_000_000_000, 1_000_000, 10_000),  # the Map's items stay within a state's payload
    ],
)
def test_a_pass_has_segments_by_the_size_of_the_table(items: int, maximum: int, segments: int) -> None:
    assert plan_segments(items, maximum=maximum) == segments


def test_a_pass_planned_again_keeps_its_segments() -> None:
    # Given a pass planned on a small table
    world = TimedWorld(segments=4)
    first = world.workflow.plan(PASS).monitor_pass

    # When the same pass is planned again once the table has grown past the maximum
    world.identities(30)
    world.workflow._max_segments = 8
    again = world.workflow.plan(PASS).monitor_pass

    # Then it is the same plan: its segments go on where they stopped
    assert again == first
    assert again.total_segments == 4


# --- segments -------------------------------------------------------------------------------------


def test_a_pass_checks_every_active_identity_exactly_once() -> None:
    # Given 60 active identities and 2 inactive, and a pass of 4 segments
    world = TimedWorld(segments=4)
    ids = world.identities(62)
    for client_id, service_id in [k for k in world.enrollments.items if k[1] in ids[:2]]:
        world.enrollments.apply(client_id, service_id, Action.DEACTIVATE, world.clock.now())
    plan = world.workflow.plan(PASS).monitor_pass

    # When each segment is checked to its end, then the pass summed up
    for segment in range(plan.total_segments):
        world.run_segment(segment)
    summary = world.workflow.summarise(PASS)

    # Then every active identity was checked once, the inactive ones never, and the totals say so
    assert world.saves == Counter(dict.fromkeys(ids[2:], 1))
    assert (summary.checked, summary.segments_done, summary.total_segments) == (60, 4, 4)
    assert summary.finished_at == world.clock.now()


def test_a_segment_longer_than_an_invocation_is_continued_where_it_stopped() -> None:
    # Given 40 identities in one segment, and invocations of 40 seconds (10 checks before the margin)
    world = TimedWorld(segments=1, page_size=5)
    ids = world.identities(40)
    world.workflow._max_segments = 1
    world.workflow.plan(PASS)

    # When the segment is checked invocation after invocation until it is done
    invocations = world.run_segment(0, seconds=40)

    # Then it took several invocations and checked each identity once
    assert invocations == 4
    assert world.saves == Counter(dict.fromkeys(ids, 1))
    assert world.passes.progress(PASS, 0) is not None
    assert world.passes.progress(PASS, 0).checked == 40  # type: ignore[union-attr]


def test_an_invocation_stopped_in_the_middle_of_a_page_checks_no_identity_twice() -> None:
    # Given a page of 10 identities and an invocation that ends after 33 seconds (3 checks)
    world = TimedWorld(segments=1, page_size=10)
    ids = world.identities(10)
    world.workflow.plan(PASS)
    stopped = world.workflow.check_segment(PASS, 0, world.invocation(33)).progress
    assert not stopped.done
    assert stopped.position is None

    # When the segment is checked again
    resumed = world.workflow.check_segment(PASS, 0, world.invocation(900)).progress

    # Then the three identities checked before are counted, not checked again
    assert resumed.done
    assert resumed.checked == 10
    assert world.saves == Counter(dict.fromkeys(ids, 1))


def test_a_failed_segment_resumes_from_its_last_page() -> None:
    # Given 20 identities in one segment, and a scan that fails on its third page
    world = TimedWorld(segments=1, page_size=5)
    ids = world.identities(20)
    world.workflow.plan(PASS)
    reading = world.enrollments.active_segment_page
    pages = Counter[str]()

    def failing(segment: int, total: int, position: str | None, page_size: int = 100) -> object:
        pages["read"] += 1
        if pages["read"] == 3:
            raise RuntimeError("scan throttled")
        return reading(segment, total, position, page_size)

    world.enrollments.active_segment_page = failing  # type: ignore[assignment,method-assign]
    with pytest.raises(RuntimeError):
        world.workflow.check_segment(PASS, 0, world.invocation(900))
    assert world.workflow.summarise(PASS).checked == 10
    assert world.workflow.summarise(PASS).finished_at is None

    # When the task is retried
    done = world.workflow.check_segment(PASS, 0, world.invocation(900)).progress

    # Then it went on from the third page: every identity checked once, the pass finished
    assert done.done
    assert done.checked == 20
    assert world.saves == Counter(dict.fromkeys(ids, 1))
    assert world.workflow.summarise(PASS).finished_at is not None


def test_the_next_pass_checks_every_identity_again() -> None:
    # Given a finished pass over 12 identities
    world = TimedWorld(segments=2)
    ids = world.identities(12)
    world.workflow.plan(PASS)
    for segment in range(2):
        world.run_segment(segment)

    # When a pass with another id runs
    world.workflow.plan("2026-03-03T06:00:00Z")
    for segment in range(2):
        while not world.workflow.check_segment("2026-03-03T06:00:00Z", segment).progress.done:
            pass

    # Then each identity was checked once in each pass, and the status shows the latest
    assert world.saves == Counter(dict.fromkeys(ids, 2))
    status = world.workflow.status()
    assert status is not None
    assert (status[0].pass_id, status[0].checked, status[0].segments_done) == ("2026-03-03T06:00:00Z", 12, 2)


def test_no_new_pass_starts_while_another_is_unfinished_and_younger_than_a_day() -> None:
    # Given a pass whose segments are not all done
    world = TimedWorld(segments=2)
    world.identities(4)
    world.workflow.plan(PASS)
    world.run_segment(0)

    # When the schedule starts another pass an hour later, then again a day after the first
    world.clock.advance(hours=1)
    an_hour_later = world.workflow.plan("2026-03-02T07:00:00Z")
    world.clock.advance(days=1)
    a_day_later = world.workflow.plan("2026-03-03T07:00:00Z")

    # Then the first is left to finish (started again by its id it goes on), the second starts anew
    assert (an_hour_later.busy, an_hour_later.monitor_pass.pass_id) == (True, PASS)
    assert world.workflow.plan(PASS).busy is False
    assert (a_day_later.busy, a_day_later.monitor_pass.pass_id) == (False, "2026-03-03T07:00:00Z")


def test_a_change_of_a_number_with_identities_in_two_segments_is_logged_once_and_sent_to_each() -> None:
    # Given two identities of one client on one number, in different segments, after a first pass
    world = TimedWorld(segments=16, page_size=5)
    client = world.client()
    identities = [world.enroll(client, "+12025550102", client_customer_id=f"c-{n}") for n in range(40)]
    segments = {zlib.crc32(f"{client}#{e.service_id}".encode()) % 16 for e in identities}
    assert len(segments) > 1
    world.workflow.plan(PASS)
    for segment in range(16):
        world.run_segment(segment)

    # When the number is unreachable in the next pass, whose segments run an hour apart
    world.carrier.unreachable.add("+12025550102")
    world.clock.advance(days=1, hours=1)
    world.workflow.plan("next")
    for segment in range(16):
        world.clock.advance(hours=1)
        while not world.workflow.check_segment("next", segment).progress.done:
            pass

    # Then each identity's webhook gets its own event, all dated at the pass's start, and the
    # change-event log counts the number's change once
    assert len({e.event_id for e in world.queue.sent}) == 40
    assert {e.occurred_at for e in world.queue.sent} == {world.passes.passes["next"].started_at}
    assert len(world.log.since(client, "+12025550102", START)) == 1
