"""The same step of one session sent by many callers at once: exactly one wins. The functions run in
worker processes, one invocation each at a time, as Lambda runs them, so the calls overlap in their
handlers and the race reaches DynamoDB."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import Api, at_once
from tests.integration.test_staged_flow_rules import (
    COMPLETED,
    KIRA,
    NEXT,
    error_of,
    out_of_turn,
    session_at,
    stored,
    valid_body,
)
from tests.sandbox_numbers import TOKEN_ONLY

THREADS = 8


@pytest.mark.overlapping
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
    body = valid_body(step, correlation_id)
    responses = at_once(lambda: api.post(f"/v3/{step}", body, token=token), THREADS)

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
