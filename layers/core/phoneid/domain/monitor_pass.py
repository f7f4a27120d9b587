"""A change-monitor pass cut into segments: how many, and how far each has gone.

A pass walks the enrollments table as a DynamoDB parallel scan of ``total_segments`` segments, each
walked on its own (the workflow's Map) and, when it is longer than one invocation, continued from
where it stopped (its ``position``, the scan's last evaluated key, kept with its counts after each
page). Segments are planned from the table's approximate item count: enough that one segment is
about a day's work of one invocation chain at most, never fewer than the minimum (so a count that
DynamoDB has not yet updated still spreads the work) nor more than the stack allows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

# About as many identities as one segment's chain of invocations checks in a couple of hours.
IDENTITIES_PER_SEGMENT: Final = 25_000
MIN_SEGMENTS: Final = 16
# DynamoDB allows a million; the Map's items (segment numbers) stay well within a state's 256 KB.
MAX_TOTAL_SEGMENTS: Final = 10_000


def plan_segments(item_count: int, *, maximum: int) -> int:
    """The number of segments of a pass over a table of about ``item_count`` items."""
    ceiling = max(1, min(maximum, MAX_TOTAL_SEGMENTS))
    wanted = max(MIN_SEGMENTS, math.ceil(max(item_count, 0) / IDENTITIES_PER_SEGMENT))
    return min(wanted, ceiling)


@dataclass(frozen=True)
class SegmentProgress:
    """How far one segment of a pass has gone; ``position`` is None before its first page."""

    segment: int
    position: str | None = None  # the scan's last evaluated key, opaque, to go on from
    checked: int = 0
    events: int = 0
    done: bool = False

    def after_page(self, position: str | None, checked: int, events: int) -> SegmentProgress:
        """The progress once one more page is checked; no next position: the segment is done."""
        return replace(
            self,
            position=position,
            checked=self.checked + checked,
            events=self.events + events,
            done=position is None,
        )


@dataclass(frozen=True)
class MonitorPass:
    """One pass: fixed by its plan (id, segments, start), summed up when every segment is done."""

    pass_id: str
    total_segments: int
    started_at: datetime
    finished_at: datetime | None = None
    checked: int = 0
    events: int = 0
    segments_done: int = 0

    @property
    def finished(self) -> bool:
        return self.finished_at is not None


def summarise(plan: MonitorPass, segments: list[SegmentProgress], now: datetime) -> MonitorPass:
    """The pass's totals over its segments; finished only when every segment is done."""
    done = [s for s in segments if s.done]
    return replace(
        plan,
        checked=sum(s.checked for s in segments),
        events=sum(s.events for s in segments),
        segments_done=len(done),
        finished_at=now if len(done) == plan.total_segments else None,
    )
