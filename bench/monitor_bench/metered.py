"""A pass over a sample of identities under bench/cost_bench's meter: every AWS call of each task
recorded with its DynamoDB request units (sized from the items moto stores), and each handler's own
CPU. The workflow's three tasks are invoked one at a time, as its states invoke them (Plan, each
segment's task until it answers done, Summarise): the meter attributes the process's CPU to the one
invocation running. What one identity checked costs: ``bench.cost_bench.monitor_model.PerIdentity``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.cost_bench.lambda_duration import call_latency_ms, gb_seconds
from bench.cost_bench.meter import Meter
from bench.cost_bench.monitor_model import PerIdentity
from bench.cost_bench.records import Invocation
from phoneid_dev.workflows import run_function
from tests.harness import Api

SEGMENT_TASK = "WebhookMonitorFunction"


@dataclass(frozen=True)
class Metered:
    checked: int
    per_identity: PerIdentity
    calls: dict[str, float]  # AWS calls of the segment task per identity, by service.Operation
    task_gb_seconds: float  # the plan's and the summary's, per pass
    segment_invocations: int


def _invoked(api: Api, function: str, event: dict[str, Any]) -> dict[str, Any]:
    result, error = run_function(api.stack, function, event)
    if error is not None:
        raise RuntimeError(f"{function} failed: {error}")
    return dict(result)


def metered_pass(api: Api, pass_id: str) -> Metered:
    meter = Meter(api, preflights=False)
    with meter.installed(), meter.invocations(f"monitor pass {pass_id}") as recorded:
        planned = _invoked(api, "MonitorPlanFunction", {"passId": pass_id})
        for segment in planned["segments"]:
            while not _invoked(api, SEGMENT_TASK, {"passId": pass_id, "segment": segment})["done"]:
                pass
        summary = _invoked(api, "MonitorSummaryFunction", {"passId": pass_id})
    checked = int(summary["checked"])
    segment_runs = [i for i in recorded.invocations if i.function == SEGMENT_TASK]
    others = [i for i in recorded.invocations if i.function != SEGMENT_TASK]
    calls = [call for run in segment_runs for call in run.calls]
    per_identity = PerIdentity(
        read_units=sum(c.read_units for c in calls) / checked,
        write_units=sum(c.write_units for c in calls) / checked,
        cpu_ms=sum(run.cpu_ms for run in segment_runs) / checked,
        own_wait_ms=sum(call_latency_ms(c.service) for c in calls if c.lane == 0) / checked,
        check_wait_ms=sum(call_latency_ms(c.service) for c in calls if c.lane != 0) / checked,
    )
    by_name = Counter(c.name for c in calls)
    return Metered(
        checked=checked,
        per_identity=per_identity,
        calls={name: count / checked for name, count in by_name.most_common()},
        task_gb_seconds=sum(_gb_seconds(run) for run in others),
        segment_invocations=len(segment_runs),
    )


def _gb_seconds(invocation: Invocation) -> float:
    return gb_seconds(invocation.billed_ms, invocation.memory_mb)
