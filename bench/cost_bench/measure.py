"""Every flow run on moto under the meter, one warm-up round first, and each flow's measured share."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from moto import mock_aws

from bench.cost_bench.flows import FLOWS, build_world, token
from bench.cost_bench.meter import Meter
from bench.cost_bench.records import Request
from bench.cost_bench.usage import Usage
from phoneid import bootstrap
from phoneid_dev.patches import apply_all
from tests.harness import PUBLIC_BASE_URL, Api


@dataclass
class Measured:
    """One flow's measured rounds, and the access token's rounds it takes its share of."""

    title: str
    rounds: list[list[Request]]
    token_rounds: list[list[Request]]
    flows_per_token: int

    def weighted(self) -> Iterator[tuple[Request, float]]:
        """Every request recorded, with its weight in one flow (a round's mean, the token's share)."""
        for requests in self.rounds:
            yield from ((request, 1 / len(self.rounds)) for request in requests)
        for requests in self.token_rounds:
            share = 1 / (len(self.token_rounds) * self.flows_per_token)
            yield from ((request, share) for request in requests)

    def usage(self) -> Usage:
        return sum((request.usage().scaled(weight) for request, weight in self.weighted()), Usage())

    def endpoints(self) -> list[tuple[str, float, float, float]]:
        """Per endpoint, in call order: requests and Lambda invocations per flow, billed ms per request."""
        rows: dict[str, list[float]] = {}
        for request, weight in self.weighted():
            billed = request.billed()
            row = rows.setdefault(request.endpoint, [0.0, 0.0, 0.0])
            row[0] += weight
            row[1] += weight * len(billed)
            row[2] += weight * sum(invocation.billed_ms for invocation in billed)
        return [(name, count, invocations, ms / count) for name, (count, invocations, ms) in rows.items()]

    def aws_calls(self) -> list[tuple[str, float, float, float]]:
        """Per service.Operation, most frequent first: calls, read and write request units per flow."""
        rows: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        for request, weight in self.weighted():
            for invocation in request.billed():
                for call in invocation.calls:
                    row = rows[call.name]
                    row[0] += weight
                    row[1] += weight * call.read_units
                    row[2] += weight * call.write_units
        return sorted(((name, *row) for name, row in rows.items()), key=lambda row: (-row[1], row[0]))


def measure(rounds: int, flows_per_token: int, *, preflights: bool) -> tuple[list[Measured], Api]:
    apply_all()  # moto as `phoneid dev` runs it
    with mock_aws():
        parameters = {"Tier": "production", "Region": "US", "LogLevel": "ERROR"}
        api = Api.on_moto(parameters, overrides={"PUBLIC_BASE_URL": PUBLIC_BASE_URL})
        world = build_world(api)
        recorded: dict[str, list[list[Request]]] = defaultdict(list)
        meter = Meter(api, preflights=preflights)
        with meter.installed():
            for round_number in range(rounds + 1):  # round 0 warms every function up, and enrolls
                for name, flow in [("token", token), *((n, f) for n, (_, f) in FLOWS.items())]:
                    api.clock.advance(seconds=2)  # under the per-second rate limits
                    with meter.flow() as requests:
                        flow(world)
                    if round_number:
                        recorded[name].append(requests)
        bootstrap.reset()
    measured = [
        Measured(title, recorded[name], recorded["token"], flows_per_token)
        for name, (title, _) in FLOWS.items()
    ]
    return measured, api
