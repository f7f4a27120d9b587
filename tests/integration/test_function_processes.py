"""The local stack's Lambda worker processes (phoneid_dev.processes): what a state machine's task
gets back from a function run in a process of its own, as Lambda answers Step Functions."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from moto import mock_aws

from phoneid_dev import processes
from phoneid_dev.processes import FunctionProcesses, FunctionSpec
from phoneid_dev.stack import LocalStack

HANDLERS = Path(__file__).with_name("worker_handlers.py")


def spec(handler: str, timeout: float = 30.0) -> FunctionSpec:
    return FunctionSpec(f"{handler}Function", HANDLERS, handler, timeout)


@pytest.fixture(scope="module")
def environment() -> dict[str, str]:
    """A function's environment as the local stack gives it (its settings name real resources)."""
    with mock_aws():
        stack = LocalStack(parameters={"Tier": "sandbox", "Region": "US", "LogLevel": "WARNING"}).provision()
        return {**os.environ, **stack.environment()}


@pytest.fixture
def pool(environment: dict[str, str]) -> Iterator[FunctionProcesses]:
    handlers = ("echo", "throttled", "exits", "hangs", "not_json")
    specs = {f"{name}Function": spec(name) for name in handlers}
    specs["hangsFunction"] = spec("hangs", timeout=0.2)
    made = FunctionProcesses(specs, environment, clock_offset=lambda: 3600.0, limit=2)
    yield made
    made.stop()


def test_a_function_answers_from_its_own_process_with_its_context_and_the_stacks_clock(
    pool: FunctionProcesses,
) -> None:
    result, error = pool.invoke("echoFunction", {"chunk": 7, "key": "work/b/chunks/000007.jsonl"})

    assert error is None
    assert result["event"] == {"chunk": 7, "key": "work/b/chunks/000007.jsonl"}
    assert result["pid"] != os.getpid()
    assert result["function"] == "echoFunction"
    assert result["remainingMs"] == 30_000
    # The local stack's clock was an hour ahead: the worker's is too.
    assert datetime.fromisoformat(result["now"]) - datetime.now(UTC) > timedelta(minutes=59)


def test_a_warm_process_serves_the_next_invocation(pool: FunctionProcesses) -> None:
    first, _ = pool.invoke("echoFunction", {})
    second, _ = pool.invoke("echoFunction", {})

    assert first["pid"] == second["pid"]
    assert pool.pids() == {"echoFunction": [first["pid"]]}


def test_overlapping_invocations_get_a_process_each_up_to_the_limit(pool: FunctionProcesses) -> None:
    pids: list[int] = []
    gate = threading.Barrier(4)

    def call() -> None:
        gate.wait()
        result, error = pool.invoke("echoFunction", {})
        assert error is None
        pids.append(result["pid"])

    callers = [threading.Thread(target=call) for _ in range(3)]
    for caller in callers:
        caller.start()
    gate.wait()
    for caller in callers:
        caller.join()

    assert len(pids) == 3
    assert 1 <= len(set(pids)) <= 2  # limit=2: the third waits for a free one
    assert len(pool.pids()["echoFunction"]) == len(set(pids))


def test_a_raised_exception_is_lambdas_error_payload_named_by_its_class(pool: FunctionProcesses) -> None:
    result, error = pool.invoke("throttledFunction", {"chunk": 3})

    assert result is None
    assert error is not None
    assert error["errorType"] == "ChunkThrottled"
    assert error["errorMessage"] == "chunk 3: the upstream source is throttling"
    assert any("throttled" in line for line in error["stackTrace"])
    assert pool.pids()["throttledFunction"]  # the process lives on for the next invocation


def test_a_process_that_exits_answers_runtime_exit_error_and_the_next_invocation_gets_a_new_one(
    pool: FunctionProcesses,
) -> None:
    result, error = pool.invoke("exitsFunction", {})

    assert result is None
    assert error is not None
    assert error["errorType"] == "Runtime.ExitError"
    assert "Runtime exited with status 3" in error["errorMessage"]
    assert "exitsFunction" not in pool.pids()
    _, error = pool.invoke("exitsFunction", {})
    assert error is not None
    assert error["errorType"] == "Runtime.ExitError"


def test_a_function_past_its_timeout_is_stopped_and_answers_sandbox_timedout(
    pool: FunctionProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(processes, "_GRACE_SECONDS", 0.0)

    result, error = pool.invoke("hangsFunction", {})

    assert result is None
    assert error == {"errorType": "Sandbox.Timedout", "errorMessage": "Task timed out after 0.20 seconds"}
    assert "hangsFunction" not in pool.pids()


def test_a_new_workers_init_is_not_counted_in_its_first_invocations_timeout(
    environment: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a function whose timeout is shorter than a new process takes to import its handler
    # (Python, boto3 and the domain package: Lambda's init phase, which has its own 10 s)
    monkeypatch.setattr(processes, "_GRACE_SECONDS", 0.0)
    quick = FunctionProcesses({"echoFunction": spec("echo", timeout=0.25)}, environment, limit=1)
    try:
        # When it is invoked cold
        result, error = quick.invoke("echoFunction", {"chunk": 1})
    finally:
        quick.stop()

    # Then the invocation's timeout started once the process was ready: it answers
    assert error is None, error
    assert result["event"] == {"chunk": 1}


def test_a_result_that_is_not_json_is_an_error_not_a_lost_invocation(pool: FunctionProcesses) -> None:
    result, error = pool.invoke("not_jsonFunction", {})

    assert result is None
    assert error is not None
    assert error["errorType"] == "TypeError"
    assert "not JSON serializable" in error["errorMessage"]


def test_a_stopped_pool_stops_its_processes_and_takes_no_more_invocations(
    environment: dict[str, str],
) -> None:
    pool = FunctionProcesses({"echoFunction": spec("echo")}, environment)
    result, _ = pool.invoke("echoFunction", {})

    pool.stop()

    assert not Path(f"/proc/{result['pid']}").exists()
    with pytest.raises(RuntimeError, match="stopping"):
        pool.invoke("echoFunction", {})


def test_a_stopped_pool_ends_the_invocations_still_running(
    environment: dict[str, str], tmp_path: Path
) -> None:
    # Given an invocation that does not return (a hang well within its timeout)
    hangs = spec("says_then_hangs", timeout=120.0)
    pool = FunctionProcesses({hangs.logical_id: hangs}, environment)
    running = tmp_path / "running"
    answers: list[tuple[object, object]] = []
    invocation = threading.Thread(
        target=lambda: answers.append(pool.invoke(hangs.logical_id, {"running": str(running)})), daemon=True
    )
    invocation.start()
    while not running.exists():  # until the handler runs (a wait for the process, not a timing)
        threading.Event().wait(0.05)

    # When the pool stops (the local stack's Ctrl-C)
    pool.stop()
    invocation.join(timeout=30)  # a bound for a hang, not a speed check

    # Then the invocation ended as Lambda ends a runtime that exits: a stopping stack waits for none
    assert not invocation.is_alive()
    [(result, error)] = answers
    assert result is None
    assert isinstance(error, dict)
    assert error["errorType"] == "Runtime.ExitError"
