"""The printed report: each flow's requests, AWS calls and dollars, the assumptions, the Markdown table."""

from __future__ import annotations

from collections import Counter

from bench.cost_bench.measure import Measured
from bench.cost_bench.prices import (
    API_GATEWAY_PER_REQUEST,
    CALL_LATENCY_MS,
    DYNAMODB_PER_READ_UNIT,
    DYNAMODB_PER_WRITE_UNIT,
    FULL_VCPU_MEMORY_MB,
    KMS_PER_ASYMMETRIC_REQUEST,
    KMS_PER_REQUEST,
    LAMBDA_PER_GB_SECOND,
    LAMBDA_PER_REQUEST,
    OTHER_CALL_LATENCY_MS,
    SMS_US_PER_MESSAGE,
)
from bench.cost_bench.template_facts import authorizer_ttl_seconds, function_memory
from phoneid_dev.template import Template


def print_report(
    measured: list[Measured], template: Template, flows_per_token: int, *, preflights: bool
) -> None:
    print("Cost per 1,000 flows on the production tier (US): us-east-1 on-demand prices, warm functions\n")
    for flow in measured:
        print(f"== {flow.title}")
        print(f"   {'requests per flow':<40}{'count':>8}{'Lambda':>8}{'billed ms':>11}")
        for endpoint, count, invocations, billed_ms in flow.endpoints():
            print(f"   {endpoint:<40}{_figure(count):>8}{_figure(invocations):>8}{billed_ms:>11.0f}")
        print(f"   {'AWS calls per flow':<40}{'count':>8}{'RRU':>8}{'WRU':>11}")
        for name, count, reads, writes in flow.aws_calls():
            print(f"   {name:<40}{_figure(count):>8}{_figure(reads):>8}{_figure(writes):>11}")
        usage, cost = flow.usage(), flow.usage().dollars()
        kms = f"{_figure(usage.kms_requests)} + {_figure(usage.kms_asymmetric_requests)} asymmetric requests"
        lines = [
            ("API Gateway", cost.api_gateway, f"{_figure(usage.api_requests)} requests"),
            ("Lambda requests", cost.lambda_requests, f"{_figure(usage.lambda_requests)} invocations"),
            ("Lambda GB-seconds", cost.lambda_gb_seconds, f"{usage.lambda_gb_seconds:.4f} GB-s"),
            ("DynamoDB reads", cost.dynamodb_reads, f"{_figure(usage.read_units)} read request units"),
            ("DynamoDB writes", cost.dynamodb_writes, f"{_figure(usage.write_units)} write request units"),
            ("KMS", cost.kms, kms),
        ]
        print("   $ per 1,000 flows                           per flow")
        for label, dollars, per_flow in lines:
            print(f"   {label:<20}{dollars * 1000:>9.4f}   {per_flow}")
        print(f"   {'total':<20}{cost.total * 1000:>9.4f}")
        print(f"   {'SMS, apart':<20}{cost.sms * 1000:>9.4f}   {_figure(usage.sms)} messages\n")
    print_assumptions(measured, template, flows_per_token, preflights=preflights)


def print_assumptions(
    measured: list[Measured], template: Template, flows_per_token: int, *, preflights: bool
) -> None:
    memory = function_memory(template)
    used = sorted(
        {i.function for flow in measured for request, _ in flow.weighted() for i in request.invocations}
    )
    sizes = Counter(memory[name] for name in used)
    ttl = ", ".join(f"{name} {seconds} s" for name, seconds in authorizer_ttl_seconds(template).items())
    waits = ", ".join(f"{service} {ms:.0f} ms" for service, ms in CALL_LATENCY_MS.items())
    preflight = "one CORS preflight per path per flow" if preflights else "no CORS preflights (--native)"
    print("Assumptions")
    for line in (
        f"API Gateway REST ${API_GATEWAY_PER_REQUEST * 1e6:.2f} per million requests",
        f"Lambda arm64 ${LAMBDA_PER_REQUEST * 1e6:.2f} per million requests, "
        f"${LAMBDA_PER_GB_SECOND:.10f} per GB-second",
        f"DynamoDB on-demand ${DYNAMODB_PER_WRITE_UNIT * 1e6:.3f} per million WRU (1 KB), "
        f"${DYNAMODB_PER_READ_UNIT * 1e6:.3f} per million RRU (4 KB strongly consistent, half eventually)",
        f"KMS ${KMS_PER_REQUEST * 1e4:.2f} per 10,000 requests, "
        f"${KMS_PER_ASYMMETRIC_REQUEST * 1e4:.2f} per 10,000 on asymmetric keys (other than RSA 2048)",
        f"SMS to US numbers ${SMS_US_PER_MESSAGE} per message, not in the totals",
        f"one POST /token per {flows_per_token} flows",
        f"authorizer cache ({ttl}): each token authorized once per flow",
        f"client API: the web SDK's calls, {preflight}",
        f"billed duration: handler CPU here / vCPU share (memory / {FULL_VCPU_MEMORY_MB} MB) + per AWS call "
        f"{waits}, other {OTHER_CALL_LATENCY_MS:.0f} ms (thread pool tasks overlap); rounded up to 1 ms",
        "memory: " + ", ".join(f"{mb} MB ({n} functions)" for mb, n in sorted(sizes.items())),
    ):
        print(f"  {line}")


def print_markdown(measured: list[Measured]) -> None:
    columns = ("API Gateway", "Lambda requests", "Lambda GB-s", "DynamoDB reads", "DynamoDB writes", "KMS")
    print("| Flow | " + " | ".join(columns) + " | **Total** | SMS per flow |")
    print("|---|" + "---:|" * (len(columns) + 2))
    for flow in measured:
        usage = flow.usage()
        cost = usage.dollars()
        split = (
            cost.api_gateway,
            cost.lambda_requests,
            cost.lambda_gb_seconds,
            cost.dynamodb_reads,
            cost.dynamodb_writes,
            cost.kms,
        )
        figures = " | ".join(f"{dollars * 1000:.4f}" for dollars in split)
        print(f"| {flow.title} | {figures} | **{cost.total * 1000:.4f}** | {_figure(usage.sms)} |")


def _figure(value: float) -> str:
    """A count per flow: whole when it is, else two decimals (the access token's share)."""
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:.2f}"
