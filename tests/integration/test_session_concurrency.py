"""Concurrent calls race exactly as in AWS (a handler instance per request), and the conditional
writes let exactly one win."""

from __future__ import annotations

import threading
from collections.abc import Callable

from tests.harness import Api, HttpResponse
from tests.integration.test_possession_sandbox import TOKEN_ONLY, start


def race(calls: int, call: Callable[[], HttpResponse]) -> list[HttpResponse]:
    barrier = threading.Barrier(calls)
    answers: list[HttpResponse] = []
    lock = threading.Lock()

    def run() -> None:
        barrier.wait()
        answer = call()
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=run) for _ in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_parallel_validates_give_exactly_one_200(api: Api) -> None:
    # Given a session ready for validate
    integrator = api.integrator()
    correlation_id, _ = start(integrator, TOKEN_ONLY)

    # When eight validate calls arrive at once
    answers = race(8, lambda: integrator.post("/v3/validate", {"correlationId": correlation_id}))

    # Then one is answered and the others are replays (403, 8003)
    assert sorted(a.status for a in answers) == [200] + [403] * 7
    assert {a.json()["code"] for a in answers if a.status == 403} == {8003}


def test_parallel_completes_give_exactly_one_200(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, _ = start(integrator, TOKEN_ONLY, dob="1999-08-08")
    integrator.post("/v3/validate", {"correlationId": correlation_id})
    body = {"correlationId": correlation_id, "individual": {"firstName": "Kira", "lastName": "Petrova"}}

    answers = race(8, lambda: integrator.post("/v3/complete", body))

    assert sorted(a.status for a in answers) == [200] + [403] * 7
