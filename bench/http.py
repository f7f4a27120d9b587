"""Throughput of the staged flow over HTTP on ``phoneid dev``, against the same flow in one process.

Starts ``phoneid dev`` (Sandbox, US) as a subprocess on free ports, as tests/e2e/conftest.py does;
creates integrator clients through ``POST /_local/clients``; then ``CLIENTS`` threads, each with its
own keep-alive connection, run the staged flow of the token-only Sandbox user (``/v3/start``,
``/v3/validate``, ``/v3/challenge``, ``/v3/complete``) until ``FLOWS`` flows are done. Each thread
has ``--integrators`` clients and takes them in turn (``POST /token`` once per client), so that the
per-client limit of 25 requests per second is not what is measured. Then, with the stack stopped,
the same flows in this process on moto, one thread, as bench/staged_flow.py runs them (tests.harness
``Api``, time advanced one second per flow).

Prints calls per second over HTTP, calls per second in process and their ratio, and the median and
p95 of each call. With ``--baseline REV``, it first runs the same flows over HTTP against
``phoneid dev`` as it was at git revision REV (checked out into a temporary worktree and run with
this checkout's packages), and prints the ratio of today's throughput to that one, both measured in
this run. These are figures for comparing changes on one machine, not a prediction of Lambda (moto
instead of DynamoDB and KMS, every client on this machine).

    .venv/bin/python bench/http.py [--flows N] [--clients N] [--integrators N] [--in-process-flows N]
                                   [--baseline REV]
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder comes first on the path, where its name would hide the
# standard library's ``http`` (which httpx imports): the repository's root (the tests package, for
# its harness) takes its place.
sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse  # noqa: E402
import contextlib  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

from bench.connect_bench.baseline import checkout  # noqa: E402

TOKEN_ONLY = "+12025550111"  # Kira Petrova: possession passes without a client SDK
CALLS = ("start", "validate", "challenge", "complete")

Timings = dict[str, list[float]]  # milliseconds per call, by the call's name


def staged_flow(post: Callable[[str, str, dict[str, Any]], dict[str, Any]]) -> None:
    """One staged flow of the token-only user, each call through ``post(name, path, body)``."""
    started = post("start", "/v3/start", {"flowType": "mobile", "phoneNumber": TOKEN_ONLY})
    correlation_id = started["correlationId"]
    post("validate", "/v3/validate", {"correlationId": correlation_id})
    post("challenge", "/v3/challenge", {"correlationId": correlation_id, "dob": "1999-08-08"})
    individual = {"firstName": "Kira", "lastName": "Petrova"}
    post("complete", "/v3/complete", {"correlationId": correlation_id, "individual": individual})


class Refused(Exception):
    """A call answered other than 200: its flow ends there (over HTTP, its status is counted)."""


# --- over HTTP ---------------------------------------------------------------------------------------


def over_http(
    flows: int, clients: int, integrators: int, tree: Path | None = None
) -> tuple[float, Timings, Counter[int]]:
    """(seconds, timings, statuses) of ``flows`` flows from ``clients`` threads on ``phoneid dev``:
    this checkout's, or that of the checkout ``tree`` (its package first on the server's path)."""
    from tests.e2e.conftest import start_dev_server

    code = {"PYTHONPATH": str(tree / "layers" / "core")} if tree else {}
    with tempfile.TemporaryDirectory(prefix="phoneid-bench-") as directory:
        server = start_dev_server(
            Path(directory), PHONEID_TIER="sandbox", PHONEID_REGION="US", PHONEID_SFTP_PORT="0", **code
        )
        try:
            return _drive(server.base_url, flows, clients, integrators)
        finally:
            server.stop()


def _drive(base_url: str, flows: int, clients: int, integrators: int) -> tuple[float, Timings, Counter[int]]:
    import httpx

    timings: Timings = defaultdict(list)
    statuses: Counter[int] = Counter()
    recorded = threading.Lock()
    remaining = [flows]
    ready = threading.Barrier(clients + 1)
    failures: list[BaseException] = []

    def take_flow() -> bool:
        with recorded:
            if remaining[0] <= 0:
                return False
            remaining[0] -= 1
            return True

    def client_thread() -> None:
        try:
            with httpx.Client(base_url=base_url, timeout=60) as http:
                tokens = []
                for _ in range(integrators):
                    created = http.post("/_local/clients", json={})
                    if created.status_code != 201:
                        raise Refused(f"/_local/clients -> {created.status_code} {created.text[:200]}")
                    form = {"grant_type": "client_credentials", **created.json()}
                    token = http.post("/token", data=form)
                    if token.status_code != 200:
                        raise Refused(f"/token -> {token.status_code} {token.text[:200]}")
                    tokens.append(token.json()["access_token"])
                turn = [0]

                def post(
                    name: str, path: str, body: dict[str, Any], *, record: bool = True
                ) -> dict[str, Any]:
                    headers = {"authorization": f"Bearer {tokens[turn[0] % len(tokens)]}"}
                    began = time.perf_counter()
                    response = http.post(path, json=body, headers=headers)
                    elapsed = (time.perf_counter() - began) * 1000
                    if record:
                        with recorded:
                            timings[name].append(elapsed)
                            statuses[response.status_code] += 1
                    if response.status_code != 200:
                        raise Refused(f"{path} -> {response.status_code} {response.text[:200]}")
                    answer: dict[str, Any] = response.json()
                    return answer

                with contextlib.suppress(Refused):  # warm: handlers loaded
                    staged_flow(lambda n, p, b: post(n, p, b, record=False))
                ready.wait()
                while take_flow():
                    turn[0] += 1
                    try:
                        staged_flow(post)
                    except Refused:
                        continue  # counted in the statuses; the next flow goes on
        except BaseException as error:
            failures.append(error)
            ready.abort()

    threads = [threading.Thread(target=client_thread) for _ in range(clients)]
    for thread in threads:
        thread.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a client failed: raised below
        ready.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    if failures:
        raise failures[0]
    return seconds, timings, statuses


# --- in this process ---------------------------------------------------------------------------------


def in_process(flows: int) -> tuple[float, Timings]:
    """(seconds, timings) of ``flows`` flows through tests.harness ``Api`` on moto, one thread."""
    from phoneid_dev.emulation import FAKE_CREDENTIALS

    os.environ.update(FAKE_CREDENTIALS)
    os.environ.update(
        POWERTOOLS_TRACE_DISABLED="true", POWERTOOLS_METRICS_DISABLED="true", POWERTOOLS_LOG_LEVEL="ERROR"
    )
    from moto import mock_aws

    from tests.harness import Api

    timings: Timings = defaultdict(list)
    with mock_aws():
        api = Api.on_moto({"Tier": "sandbox", "Region": "US", "LogLevel": "ERROR"})
        integrator = api.integrator()

        def post(name: str, path: str, body: dict[str, Any], *, record: bool = True) -> dict[str, Any]:
            began = time.perf_counter()
            response = integrator.post(path, body)
            if record:
                timings[name].append((time.perf_counter() - began) * 1000)
            if response.status != 200:
                raise Refused(f"{path} -> {response.status} {response.body[:200]}")
            return dict(response.json())

        staged_flow(lambda n, p, b: post(n, p, b, record=False))  # warm: token and handlers
        began = time.perf_counter()
        for _ in range(flows):
            api.clock.advance(seconds=1)  # stay under the per-second rate limit
            staged_flow(post)
        seconds = time.perf_counter() - began
    return seconds, timings


# --- report ------------------------------------------------------------------------------------------


def _percentiles(values: list[float]) -> tuple[float, float]:
    p95 = statistics.quantiles(values, n=20)[18] if len(values) >= 20 else max(values)
    return statistics.median(values), p95


def _print_timings(timings: Timings) -> None:
    for name in CALLS:
        if timings.get(name):
            p50, p95 = _percentiles(timings[name])
            print(f"    {name:<10} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")
    every = [value for name in CALLS for value in timings.get(name, [])]
    if every:
        p50, p95 = _percentiles(every)
        print(f"    {'every call':<10} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--flows", type=int, default=400, help="staged flows over HTTP (default 400)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent HTTP clients (default 8)")
    parser.add_argument(
        "--integrators", type=int, default=4, help="integrator clients per HTTP client (default 4)"
    )
    parser.add_argument("--in-process-flows", type=int, default=100, help="flows in process (default 100)")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run the flows over HTTP on phoneid dev at git revision REV"
    )
    args = parser.parse_args()

    baseline_rate = None
    if args.baseline:
        with checkout(args.baseline) as tree:
            baseline_rate = _report_http(args, f"phoneid dev at {args.baseline}", tree)
    http_rate = _report_http(args, "phoneid dev")

    local_seconds, local_timings = in_process(args.in_process_flows)
    local_calls = sum(len(values) for values in local_timings.values())
    local_rate = local_calls / local_seconds
    print(f"staged flow in process (tests.harness Api on moto), 1 thread, {args.in_process_flows} flows")
    print(f"  {local_rate:7.1f} calls/s   ({local_calls} calls in {local_seconds:.1f} s)")
    _print_timings(local_timings)

    print(f"ratio HTTP ({args.clients} clients) / in process: {http_rate / local_rate:.2f}")
    if baseline_rate:
        print(f"ratio HTTP now / HTTP at {args.baseline}: {http_rate / baseline_rate:.2f}")


def _report_http(args: argparse.Namespace, stack: str, tree: Path | None = None) -> float:
    """Runs the flows over HTTP on ``stack``, prints its figures and answers its calls per second."""
    seconds, timings, statuses = over_http(args.flows, args.clients, args.integrators, tree)
    calls = sum(statuses.values())
    rate = calls / seconds
    print(f"staged flow over HTTP on {stack}, {args.clients} clients, {args.flows} flows")
    print(f"  {rate:7.1f} calls/s   ({calls} calls in {seconds:.1f} s; statuses {dict(statuses)})")
    _print_timings(timings)
    return rate


if __name__ == "__main__":
    main()
