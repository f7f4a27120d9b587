"""What the meter records of a flow: each request, the invocations that served it, their AWS calls."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.cost_bench.lambda_duration import billed_duration_ms, gb_seconds, waiting_ms
from bench.cost_bench.usage import Usage


@dataclass
class AwsCall:
    name: str  # "dynamodb.GetItem"
    lane: int = 0  # 0: the handler's thread; else the thread pool task that made the call
    read_units: float = 0.0
    write_units: float = 0.0
    kms_asymmetric: bool = False
    sms: int = 0

    @property
    def service(self) -> str:
        return self.name.split(".", 1)[0]


@dataclass
class Invocation:
    function: str
    memory_mb: int
    calls: list[AwsCall] = field(default_factory=list)
    # The handler's own CPU here, all its threads: its AWS calls (moto's work) and nested invocations out.
    cpu_ms: float = 0.0
    excluded_ms: float = 0.0
    cached: bool = False  # an authorizer answer API Gateway has in its cache: not invoked in AWS

    @property
    def billed_ms(self) -> int:
        waited = waiting_ms([(call.lane, call.service) for call in self.calls])
        return billed_duration_ms(self.cpu_ms, self.memory_mb, waited)

    def usage(self) -> Usage:
        if self.cached:
            return Usage()
        usage = Usage(lambda_requests=1, lambda_gb_seconds=gb_seconds(self.billed_ms, self.memory_mb))
        for call in self.calls:
            usage.read_units += call.read_units
            usage.write_units += call.write_units
            if call.service == "kms":
                if call.kms_asymmetric:
                    usage.kms_asymmetric_requests += 1
                else:
                    usage.kms_requests += 1
            usage.sms += call.sms
        return usage


@dataclass
class Request:
    endpoint: str  # "POST /v3/start", the route as the template names it
    invocations: list[Invocation] = field(default_factory=list)

    def usage(self) -> Usage:
        usage = Usage(api_requests=1)
        for invocation in self.invocations:
            usage += invocation.usage()
        return usage

    def billed(self) -> list[Invocation]:
        return [invocation for invocation in self.invocations if not invocation.cached]
