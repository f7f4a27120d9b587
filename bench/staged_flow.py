"""Latency of the staged flow through the local API Gateway on moto, in one process.

Prints median and p95 per call. These are figures for comparing changes on one machine, not a
prediction of Lambda latency (no network, no cold starts, moto instead of DynamoDB and KMS).

    .venv/bin/python bench/staged_flow.py [rounds]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict

import _setup  # noqa: F401 - first: the import path and the fake AWS environment (bench/_setup.py)

# isort: split

from moto import mock_aws

from tests.harness import Api


def main(rounds: int) -> None:
    with mock_aws():
        api = Api.on_moto({"Tier": "sandbox", "Region": "US", "LogLevel": "ERROR"})
        integrator = api.integrator()
        integrator.access_token  # noqa: B018 - warm up token and handlers
        timings: dict[str, list[float]] = defaultdict(list)

        def timed(name: str, path: str, body: dict[str, object]) -> dict[str, object]:
            began = time.perf_counter()
            response = integrator.post(path, body)
            timings[name].append((time.perf_counter() - began) * 1000)
            assert response.status == 200, response.body
            return dict(response.json())

        for _ in range(rounds):
            api.clock.advance(seconds=1)  # stay under the per-second rate limit
            started = timed("start", "/v3/start", {"flowType": "mobile", "phoneNumber": "+12025550111"})
            correlation_id = started["correlationId"]
            timed("validate", "/v3/validate", {"correlationId": correlation_id})
            timed("challenge", "/v3/challenge", {"correlationId": correlation_id, "dob": "1999-08-08"})
            individual = {"firstName": "Kira", "lastName": "Petrova"}
            timed("complete", "/v3/complete", {"correlationId": correlation_id, "individual": individual})

    print(f"staged flow, {rounds} rounds, local gateway on moto (ms)")
    for name, values in timings.items():
        p95 = statistics.quantiles(values, n=20)[18] if len(values) >= 20 else max(values)
        print(f"  {name:<10} median {statistics.median(values):6.1f}   p95 {p95:6.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
