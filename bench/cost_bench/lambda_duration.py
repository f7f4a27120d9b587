"""Lambda's billed duration: the handler's CPU on its share of a vCPU plus its modelled waits on AWS."""

from __future__ import annotations

import math
from collections import defaultdict

from bench.cost_bench.prices import CALL_LATENCY_MS, FULL_VCPU_MEMORY_MB, OTHER_CALL_LATENCY_MS


def cpu_share(memory_mb: int) -> float:
    """The fraction of a vCPU a function of ``memory_mb`` gets (one vCPU at 1,769 MB)."""
    return min(1.0, memory_mb / FULL_VCPU_MEMORY_MB)


def call_latency_ms(service: str) -> float:
    return CALL_LATENCY_MS.get(service, OTHER_CALL_LATENCY_MS)


def waiting_ms(calls: list[tuple[int, str]]) -> float:
    """How long a handler waits on its AWS calls, given as (lane, service), lane 0 the handler's own
    thread: its calls one after the other; the tasks it hands to a thread pool (the signal sources,
    asked all at once) overlap, so the wait for them is the longest task's."""
    own = sum(call_latency_ms(service) for lane, service in calls if lane == 0)
    tasks: dict[int, float] = defaultdict(float)
    for lane, service in calls:
        if lane:
            tasks[lane] += call_latency_ms(service)
    return own + max(tasks.values(), default=0.0)


def billed_duration_ms(cpu_ms: float, memory_mb: int, waited_ms: float) -> int:
    """Lambda's billed duration: the handler's CPU on its share of a vCPU plus its waits on AWS,
    rounded up to the millisecond."""
    return max(1, math.ceil(cpu_ms / cpu_share(memory_mb) + waited_ms))


def gb_seconds(duration_ms: int, memory_mb: int) -> float:
    return duration_ms / 1000 * memory_mb / 1024
