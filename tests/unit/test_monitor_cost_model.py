"""The change monitor's model of bench/monitor.py (bench/cost_bench/monitor_model.py): a pass's
segments, its time and what bounds it, its invocations and state transitions, and its dollars."""

from __future__ import annotations

import pytest

from bench.cost_bench.monitor_model import PerIdentity, Settings, model_pass, pass_cost, segments_of

MEASURED = PerIdentity(read_units=1.5, write_units=2.0, cpu_ms=0.5, own_wait_ms=0.6, check_wait_ms=24.0)
OPERATOR = Settings(camara_calls=4, camara_latency_ms=150.0)


@pytest.mark.parametrize(
    ("identities", "segments"),
    [(1_000, 16), (200_000, 24), (1_000_000, 120), (10_000_000, 256)],
)
def test_a_pass_is_planned_from_the_tables_items(identities: int, segments: int) -> None:
    # Three items an identity (identity, place, roster), 25,000 a segment, at least 16, at most 256
    assert segments_of(identities, Settings()) == segments


def test_ten_million_with_an_operator_are_bound_by_the_workflows_concurrency() -> None:
    model = model_pass(10_000_000, MEASURED, OPERATOR)

    # A check: 0.5 ms of CPU on 512/1769 of a vCPU, 24 ms on DynamoDB, 4 CAMARA calls of 150 ms
    assert model.check_ms == pytest.approx(0.5 * 1769 / 512 + 24 + 600)
    # The task's time per identity: its own waits plus a check's eighth (8 at once)
    assert model.invocation_ms_per_identity == pytest.approx(0.6 + model.check_ms / 8)
    # 16 segments at once of 256
    assert model.segments == 256
    assert model.rate == pytest.approx(16_000 / model.invocation_ms_per_identity)
    assert model.bound == "MonitorMaxConcurrency"
    assert model.hours == pytest.approx(10_000_000 / model.rate / 3600)
    assert 13 < model.hours < 14
    # 39,062.5 identities a segment at ~78.8 ms: 3,079 s, 4 invocations of up to 870 s each
    assert model.invocations == 256 * 4
    # 6 states of the pass, and per segment (task + choice) per invocation and its end
    assert model.transitions == 6 + 256 * (2 * 4 + 1)


def test_an_operators_rate_limit_below_the_concurrency_bounds_the_pass() -> None:
    limited = Settings(camara_calls=4, camara_latency_ms=150.0, operator_calls_per_second=500.0)

    model = model_pass(10_000_000, MEASURED, limited)

    assert model.operator_rate == 125.0  # 500 calls a second, 4 an identity
    assert model.bound == "the operator's rate limit"
    assert model.hours == pytest.approx(10_000_000 / 125 / 3600)


def test_a_pass_costs_its_invocations_time_units_and_transitions() -> None:
    model = model_pass(10_000_000, MEASURED, OPERATOR)

    cost = pass_cost(model, MEASURED, task_gb_seconds=0.01)

    invocations = 256 * 4 + 2  # and the plan and the summary
    assert cost.lambda_requests == pytest.approx(invocations * 0.20 / 1e6)
    gb_seconds = 10_000_000 * model.invocation_ms_per_identity / 1000 * 512 / 1024 + 0.01
    assert cost.lambda_gb_seconds == pytest.approx(gb_seconds * 0.0000133334)
    assert cost.dynamodb_reads == pytest.approx(15_000_000 * 0.125 / 1e6)  # $1.875
    assert cost.dynamodb_writes == pytest.approx(20_000_000 * 0.625 / 1e6)  # $12.50
    assert cost.step_functions == pytest.approx(2_310 * 0.025 / 1000)
    assert cost.cloudwatch_logs == pytest.approx(invocations * 1_500 / 1e9 * 0.50)
    per_million = cost.scaled(0.1)
    assert per_million.total == pytest.approx(cost.total / 10)
    assert per_million.dynamodb_writes == pytest.approx(1.25)
