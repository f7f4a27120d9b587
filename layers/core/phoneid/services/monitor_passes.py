"""The change monitor's pass as a workflow (statemachines/monitor.asl.json): plan it, check each
segment of it (continued over as many invocations as it needs), sum it up.

Each segment's progress (position and counts) is kept after every page, so an invocation that
stops (out of time, or failed and retried, or a redriven execution) goes on where the last page
ended; an identity of a page checked again after a stop mid-page is recognised by its monitor
state (the pass that checked it) and counted, not checked twice. Rules of the plan:
``phoneid.domain.monitor_pass``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, timedelta
from typing import Final

from aws_lambda_powertools import Logger

from phoneid.domain.monitor_pass import MonitorPass, SegmentProgress, plan_segments, summarise
from phoneid.ports import Clock, EnrollmentStore, MonitorPassStore
from phoneid.services.monitor import ChangeMonitor

logger = Logger(child=True)


# A workflow's execution ends within a day (its TimeoutSeconds): an unfinished pass older than
# that runs no more, and a new one may start.
PASS_LIFETIME: Final = timedelta(days=1)


@dataclass(frozen=True)
class Planned:
    """The pass a workflow's execution works on; ``busy``: another pass runs, this one does nothing."""

    monitor_pass: MonitorPass
    busy: bool = False


@dataclass(frozen=True)
class SegmentRun:
    """One invocation over a segment: the segment's progress, and what this invocation counted."""

    progress: SegmentProgress
    checked: int
    events: int


class MonitorPasses:
    def __init__(
        self,
        *,
        monitor: ChangeMonitor,
        enrollments: EnrollmentStore,
        passes: MonitorPassStore,
        clock: Clock,
        max_segments: int,
        page_size: int = 100,
    ) -> None:
        self._monitor = monitor
        self._enrollments = enrollments
        self._passes = passes
        self._clock = clock
        self._max_segments = max_segments
        self._page_size = page_size

    def plan(self, pass_id: str | None = None) -> Planned:
        """The pass ``pass_id`` (default: one named by this moment), planned now unless it was:
        a pass started again keeps its segments, and each goes on where it stopped. While another
        pass is unfinished and younger than a workflow can run, no new one starts (``busy``)."""
        now = self._clock.now()
        if pass_id is not None and (kept := self._passes.get(pass_id)) is not None:
            return Planned(kept)
        latest = self._passes.latest()
        if latest is not None and now - latest.started_at < PASS_LIFETIME and not self._all_done(latest):
            logger.warning("monitor pass not started: another runs", extra={"running": latest.pass_id})
            return Planned(latest, busy=True)
        segments = plan_segments(self._enrollments.approximate_count(), maximum=self._max_segments)
        wanted = MonitorPass(
            pass_id=pass_id or now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            total_segments=segments,
            started_at=now,
        )
        planned = self._passes.plan(wanted)
        logger.info(
            "monitor pass planned",
            extra={"passId": planned.pass_id, "totalSegments": planned.total_segments},
        )
        return Planned(planned)

    def check_segment(
        self, pass_id: str, segment: int, time_left: Callable[[], float] | None = None
    ) -> SegmentRun:
        """Check the segment's identities page by page from where it stopped, until it is done or
        the invocation nears its end; its progress is kept after each page."""
        plan = self._passes.get(pass_id)
        if plan is None or not 0 <= segment < plan.total_segments:
            raise ValueError(f"no segment {segment} in monitor pass {pass_id}")
        progress = self._passes.progress(pass_id, segment) or SegmentProgress(segment)
        checked = events = 0
        while not progress.done and not self._monitor.out_of_time(time_left):
            page, after = self._enrollments.active_segment_page(
                segment, plan.total_segments, progress.position, self._page_size
            )
            report = self._monitor.check_page(
                page, pass_id=pass_id, started_at=plan.started_at, time_left=time_left
            )
            if report.late:
                break  # the page is read again next time; its checked identities are known then
            progress = progress.after_page(after, report.checked, report.events)
            checked, events = checked + report.checked, events + report.events
            self._passes.save_progress(pass_id, progress, self._clock.now())
        logger.info(
            "monitor segment",
            extra={
                "passId": pass_id,
                "segment": segment,
                "checked": progress.checked,
                "events": progress.events,
                "done": progress.done,
            },
        )
        return SegmentRun(progress, checked=checked, events=events)

    def summarise(self, pass_id: str) -> MonitorPass:
        """The pass's totals over its segments, kept; finished once every segment is done."""
        plan = self._passes.get(pass_id)
        if plan is None:
            raise ValueError(f"no monitor pass {pass_id}")
        summary = summarise(plan, self._passes.segments(pass_id), self._clock.now())
        self._passes.save_totals(summary)
        log = logger.info if summary.finished else logger.warning
        log(
            "monitor pass",
            extra={
                "passId": pass_id,
                "checked": summary.checked,
                "events": summary.events,
                "segmentsDone": summary.segments_done,
                "totalSegments": summary.total_segments,
            },
        )
        return summary

    def _all_done(self, planned: MonitorPass) -> bool:
        """Whether every segment is done (its totals may not be summed up yet)."""
        if planned.finished:
            return True
        segments = self._passes.segments(planned.pass_id)
        return summarise(planned, segments, self._clock.now()).finished

    def status(self) -> tuple[MonitorPass, list[SegmentProgress]] | None:
        """The latest pass, summed up from its segments now (it may still run)."""
        latest = self._passes.latest()
        if latest is None:
            return None
        segments = self._passes.segments(latest.pass_id)
        if latest.finished:
            return latest, segments
        # Finished only once Summarise says so.
        return replace(summarise(latest, segments, self._clock.now()), finished_at=None), segments
