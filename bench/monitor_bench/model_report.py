"""The ten-million-a-day model printed from the metered pass: the template's settings read from the
template (the segment task's memory and timeout, ``MonitorMaxConcurrency`` and ``MonitorMaxSegments``
defaults), the code's (8 checks at once, 30 s margin), and the operator's side as assumptions."""

from __future__ import annotations

from dataclasses import replace

from bench.cost_bench.monitor_model import PassModel, Settings, model_pass, pass_cost
from bench.cost_bench.prices import CAMARA_CALL_LATENCY_MS
from bench.cost_bench.template_facts import function_memory
from bench.monitor_bench.metered import SEGMENT_TASK, Metered
from phoneid.domain.monitor_pass import IDENTITIES_PER_SEGMENT, MIN_SEGMENTS
from phoneid.services.monitor import TIME_MARGIN_SECONDS
from phoneid_dev.template import Template

TARGET = 10_000_000
# With an operator, each check asks SIM swap, number recycling, reachability and roaming (CAMARA).
CAMARA_CALLS = 4
OPERATOR_LIMITS = (250.0, 500.0, 1_000.0)  # calls per second an operator might allow (assumptions)


def template_settings(template: Template) -> Settings:
    defaults = template.parameter_defaults()
    props = template.of_type("AWS::Serverless::Function")[SEGMENT_TASK]
    return Settings(
        memory_mb=function_memory(template)[SEGMENT_TASK],
        timeout_s=float(props["Timeout"]),
        margin_s=TIME_MARGIN_SECONDS,
        max_concurrency=int(defaults["MonitorMaxConcurrency"]),
        max_segments=int(defaults["MonitorMaxSegments"]),
        identities_per_segment=IDENTITIES_PER_SEGMENT,
        min_segments=MIN_SEGMENTS,
    )


def _line(title: str, model: PassModel, metered: Metered) -> str:
    per_pass = pass_cost(model, metered.per_identity, metered.task_gb_seconds)
    cost = per_pass.scaled(1_000_000 / model.identities)
    return (
        f"  {title}: {model.hours:5.1f} h at {model.rate:6.0f} identities/s (bound: {model.bound});"
        f" check {model.check_ms:.0f} ms; ${cost.total:.2f} per million checked"
        f" (Lambda ${cost.lambda_requests + cost.lambda_gb_seconds:.3f}, DynamoDB reads"
        f" ${cost.dynamodb_reads:.3f}, writes ${cost.dynamodb_writes:.3f}, Step Functions"
        f" ${cost.step_functions:.4f}, CloudWatch Logs ${cost.cloudwatch_logs:.5f})"
    )


def print_model(template: Template, metered: Metered) -> None:
    settings = template_settings(template)
    unit = metered.per_identity
    print(
        f"metered sample: {metered.checked:,} identities, {metered.segment_invocations} segment invocations;"
        f" per identity: {unit.read_units:.3f} read units, {unit.write_units:.3f} write units,"
        f" {unit.cpu_ms:.3f} ms CPU, waits {unit.own_wait_ms:.2f} ms (task)"
        f" + {unit.check_wait_ms:.2f} ms (check)"
    )
    print("  AWS calls per identity: " + ", ".join(f"{n} {c:.3f}" for n, c in metered.calls.items()))
    print(
        f"model: {TARGET:,} active identities, {settings.memory_mb} MB, MonitorMaxConcurrency"
        f" {settings.max_concurrency}, MonitorMaxSegments {settings.max_segments}, {settings.workers}"
        f" checks at once per segment"
    )
    sandbox = model_pass(TARGET, unit, settings)
    print(_line("Sandbox (lists only)", sandbox, metered))
    operator = replace(settings, camara_calls=CAMARA_CALLS, camara_latency_ms=CAMARA_CALL_LATENCY_MS)
    unlimited = model_pass(TARGET, unit, operator)
    print(_line(f"operator, {CAMARA_CALL_LATENCY_MS:.0f} ms a call, no limit", unlimited, metered))
    for limit in OPERATOR_LIMITS:
        limited = replace(operator, operator_calls_per_second=limit)
        print(_line(f"operator limit {limit:,.0f} calls/s", model_pass(TARGET, unit, limited), metered))
