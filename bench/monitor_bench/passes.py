"""A monitor pass run as the schedule runs it: an execution of MonitorStateMachine in moto's Step
Functions interpreter (Plan, the Distributed Map's child executions running the segment task until
each segment is done, Summarise), its Lambda tasks run by the template's handlers in this process.
And a pass interrupted: one segment's progress cannot be kept after some pages (every retry of its
task fails), so the execution fails unfinished; the fault is then gone and the same passId is
started again, as an operator would (docs/webhooks.md#the-monitors-pass)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from phoneid.adapters.dynamodb.monitor_passes import DynamoMonitorPasses
from phoneid.domain.monitor_pass import SegmentProgress
from phoneid_dev import workflows
from tests.harness import Api

TIMEOUT = 6 * 3600.0


def run_pass(api: Api, pass_id: str) -> dict[str, Any]:
    """The execution of a pass started with ``{"passId": pass_id}``, once it ended."""
    machine = api.stack.physical_ids["MonitorStateMachine"]
    return workflows.run(machine, {"passId": pass_id}, timeout=TIMEOUT)


@contextmanager
def segment_failing_after(segment: int, pages: int) -> Iterator[list[int]]:
    """Segment ``segment``'s progress cannot be kept once it has ``pages`` pages (the task raises
    after checking the page, so the page's identities are checked but its position is not kept);
    yields the pages refused so far (one per attempt)."""
    saving = DynamoMonitorPasses.save_progress
    refused: list[int] = []
    kept: dict[int, int] = {}

    def failing(store: DynamoMonitorPasses, pass_id: str, progress: SegmentProgress, now: datetime) -> None:
        if progress.segment == segment and kept.get(segment, 0) >= pages:
            refused.append(progress.checked)
            raise RuntimeError("the bench's fault: progress write failed")
        saving(store, pass_id, progress, now)
        kept[progress.segment] = kept.get(progress.segment, 0) + 1

    DynamoMonitorPasses.save_progress = failing  # type: ignore[method-assign]
    try:
        yield refused
    finally:
        DynamoMonitorPasses.save_progress = saving  # type: ignore[method-assign]


def output(execution: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(execution.get("output") or "{}"))
