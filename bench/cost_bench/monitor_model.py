"""The change monitor's pass at scale: how long a pass of N active identities takes, what bounds it,
and what AWS bills for it, from what a metered pass measured per identity (bench/monitor.py) and the
template's settings. Pure arithmetic (tests/unit/test_cost_model.py checks it).

A pass is planned into segments (one per 25,000 items of the table, at least 16, at most
``MonitorMaxSegments``); ``MonitorMaxConcurrency`` segments run at once, each by one invocation at a
time that checks ``workers`` identities at once and runs until 30 s before its timeout. A check asks
the signal sources one after another; a page's scan and its progress write are the invocation's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bench.cost_bench.lambda_duration import cpu_share
from bench.cost_bench.prices import (
    CLOUDWATCH_LOGS_PER_GB,
    DYNAMODB_PER_READ_UNIT,
    DYNAMODB_PER_WRITE_UNIT,
    LAMBDA_PER_GB_SECOND,
    LAMBDA_PER_REQUEST,
    LOG_BYTES_PER_INVOCATION,
    STEP_FUNCTIONS_PER_TRANSITION,
)

# The parent execution's states entered once per pass: Plan, AnotherPassRuns, CheckSegments,
# Summarise, Finished, Done (statemachines/monitor.asl.json).
PASS_TRANSITIONS = 6


@dataclass(frozen=True)
class PerIdentity:
    """What one identity checked cost the segment task, measured (a page's share included)."""

    read_units: float
    write_units: float
    cpu_ms: float  # the handler's own CPU, moto's and botocore's work excluded
    own_wait_ms: float  # modelled waits on the invocation's own thread (scan, progress), its share
    check_wait_ms: float  # modelled waits of the check itself on AWS (its worker thread)


@dataclass(frozen=True)
class Settings:
    """The template's and the code's settings, and the operator's side (assumptions)."""

    memory_mb: int = 512
    timeout_s: float = 900.0
    margin_s: float = 30.0  # the task stops starting identities this long before its timeout
    workers: int = 8
    max_concurrency: int = 16
    max_segments: int = 256
    items_per_identity: float = 3.0  # identity, place, roster: the table the plan counts
    identities_per_segment: int = 25_000
    min_segments: int = 16
    camara_calls: int = 0  # per identity: 4 with an operator (SIM swap, recycling, reachability, roaming)
    camara_latency_ms: float = 0.0
    operator_calls_per_second: float | None = None  # the operator's rate limit, if any


@dataclass(frozen=True)
class PassModel:
    identities: int
    segments: int
    check_ms: float  # one identity's check, on its worker
    invocation_ms_per_identity: float  # a segment task's time per identity (workers at once)
    concurrency_rate: float  # identities/s the workflow's concurrency allows
    operator_rate: float | None  # identities/s the operator's rate limit allows
    invocations: int  # segment task invocations
    transitions: int  # Step Functions state transitions, parent and children
    memory_mb: int

    @property
    def rate(self) -> float:
        return min(self.concurrency_rate, self.operator_rate or math.inf)

    @property
    def bound(self) -> str:
        return "the operator's rate limit" if self.rate < self.concurrency_rate else "MonitorMaxConcurrency"

    @property
    def hours(self) -> float:
        return self.identities / self.rate / 3600

    @property
    def gb_seconds(self) -> float:
        """The segment task's, billed on its time (its waits on the sources included)."""
        return self.identities * self.invocation_ms_per_identity / 1000 * self.memory_mb / 1024


def segments_of(identities: int, settings: Settings) -> int:
    """phoneid.domain.monitor_pass.plan_segments over the table's items."""
    items = identities * settings.items_per_identity
    wanted = max(settings.min_segments, math.ceil(items / settings.identities_per_segment))
    return min(wanted, settings.max_segments)


def model_pass(identities: int, measured: PerIdentity, settings: Settings) -> PassModel:
    check_ms = (
        measured.cpu_ms / cpu_share(settings.memory_mb)
        + measured.check_wait_ms
        + settings.camara_calls * settings.camara_latency_ms
    )
    per_identity_ms = measured.own_wait_ms + check_ms / settings.workers
    segments = segments_of(identities, settings)
    running = min(settings.max_concurrency, segments)
    concurrency_rate = running * 1000 / per_identity_ms
    operator_rate = (
        settings.operator_calls_per_second / settings.camara_calls
        if settings.operator_calls_per_second and settings.camara_calls
        else None
    )
    # Each segment's chain of invocations, each up to timeout - margin of checking.
    usable_ms = (settings.timeout_s - settings.margin_s) * 1000
    per_segment = math.ceil(identities / segments * per_identity_ms / usable_ms)
    invocations = segments * per_segment
    transitions = PASS_TRANSITIONS + segments * (2 * per_segment + 1)
    return PassModel(
        identities=identities,
        segments=segments,
        check_ms=check_ms,
        invocation_ms_per_identity=per_identity_ms,
        concurrency_rate=concurrency_rate,
        operator_rate=operator_rate,
        invocations=invocations,
        transitions=transitions,
        memory_mb=settings.memory_mb,
    )


@dataclass(frozen=True)
class MonitorCost:
    """Dollars of a pass, split as AWS bills them (the plan and summary tasks included)."""

    lambda_requests: float
    lambda_gb_seconds: float
    dynamodb_reads: float
    dynamodb_writes: float
    step_functions: float
    cloudwatch_logs: float

    @property
    def total(self) -> float:
        return (
            self.lambda_requests
            + self.lambda_gb_seconds
            + self.dynamodb_reads
            + self.dynamodb_writes
            + self.step_functions
            + self.cloudwatch_logs
        )

    def scaled(self, factor: float) -> MonitorCost:
        return MonitorCost(
            self.lambda_requests * factor,
            self.lambda_gb_seconds * factor,
            self.dynamodb_reads * factor,
            self.dynamodb_writes * factor,
            self.step_functions * factor,
            self.cloudwatch_logs * factor,
        )


def pass_cost(model: PassModel, measured: PerIdentity, task_gb_seconds: float = 0.0) -> MonitorCost:
    """What a pass costs; ``task_gb_seconds``: the plan's and the summary's, measured."""
    invocations = model.invocations + 2  # and the plan and the summary
    return MonitorCost(
        lambda_requests=invocations * LAMBDA_PER_REQUEST,
        lambda_gb_seconds=(model.gb_seconds + task_gb_seconds) * LAMBDA_PER_GB_SECOND,
        dynamodb_reads=model.identities * measured.read_units * DYNAMODB_PER_READ_UNIT,
        dynamodb_writes=model.identities * measured.write_units * DYNAMODB_PER_WRITE_UNIT,
        step_functions=model.transitions * STEP_FUNCTIONS_PER_TRANSITION,
        cloudwatch_logs=invocations * LOG_BYTES_PER_INVOCATION / 1e9 * CLOUDWATCH_LOGS_PER_GB,
    )
