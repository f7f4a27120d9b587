"""The same step of one session sent by many callers at once: exactly one wins. The local gateway
loads extra handler instances when calls overlap, as Lambda does, so the race reaches DynamoDB."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from phoneid.dev.gateway import HttpResponse
from tests.harness import Api
from tests.integration.test_staged_flow_rules import (
    COMPLETED,
    KIRA,
    NEXT,
    TOKEN_ONLY,
    error_of,
    out_of_turn,
    session_at,
    stored,
    valid_body,
)

THREADS = 8


def race(api: Api, path: str, body: dict[str, Any], token: str) -> list[HttpResponse]:
    """Send the same request from THREADS threads released together; every thread's response."""
    barrier = threading.Barrier(THREADS)
    responses: list[HttpResponse | BaseException | None] = [None] * THREADS

    def send(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            responses[index] = api.post(path, body, token=token)
        except BaseException as error:  # reported below, in the test's thread
            responses[index] = error

    threads = [threading.Thread(target=send, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    failures = [r for r in responses if not isinstance(r, HttpResponse)]
    assert not failures, failures
    return [r for r in responses if isinstance(r, HttpResponse)]


@pytest.mark.parametrize(
    ("step", "following", "success"),
    [
        ("validate", "challenge", {"success": True, "challengeMissing": True, "phoneNumber": TOKEN_ONLY}),
        ("challenge", "complete", {"success": True, "individual": KIRA}),
        ("complete", "done", {k: v for k, v in COMPLETED.items() if k != "next"}),
    ],
)
def test_concurrent_calls_of_one_step_get_exactly_one_200(
    api: Api, step: str, following: str, success: dict[str, Any]
) -> None:
    # Given a session waiting for one step, and an integrator holding its access token
    integrator = api.integrator()
    correlation_id = session_at(integrator, step)
    before = stored(api, integrator.client_id, correlation_id)
    token = integrator.access_token

    # When eight callers send that step at the same moment
    responses = race(api, f"/v3/{step}", valid_body(step, correlation_id), token)

    # Then exactly one is answered 200, and every other is the replay's 403 with 8003
    winners = [r for r in responses if r.status == 200]
    losers = [r for r in responses if r.status != 200]
    assert len(winners) == 1, [(r.status, r.body) for r in responses]
    assert winners[0].json() == {**success, "next": NEXT[following]}
    assert [r.status for r in losers] == [403] * (THREADS - 1)
    assert all(error_of(r) == out_of_turn(correlation_id, following) for r in losers)
    # And the session was written once
    after = stored(api, integrator.client_id, correlation_id)
    assert before is not None
    assert after is not None
    assert after["nextStep"] == following
    assert step in after["answered"]
    assert after["version"] == before["version"] + 1
