"""A conditional write whose answer was lost is retried by botocore, and the retry finds the write it
made: it is recognised as this request's own success, not a conflict
(``phoneid.adapters.dynamodb.own_writes``).

The fault is exactly the one seen on ``/v3/start``: the attempt reaches moto, which applies it, and
the client's read of the answer times out (``Fault.LOST_ANSWER`` of ``tests/faults.py``), so botocore's
standard retry sends the same write again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.fault_scenarios import SCENARIOS
from tests.faults import Fault, Injector, Layer, installed
from tests.harness import Api
from tests.integration.test_faults import CALLS


@pytest.fixture
def injector(monkeypatch: pytest.MonkeyPatch) -> Iterator[Injector]:
    with installed(monkeypatch) as running:
        yield running


def _sessions(api: Api) -> set[str]:
    return {
        item["correlationId"]["S"] for item in api.table_items("SessionsTable") if "correlationId" in item
    }


def test_start_whose_session_put_was_applied_but_its_answer_lost_answers_200_with_one_session(
    make_api: Callable[..., Api], injector: Injector
) -> None:
    # Given a client about to start a flow
    scenario = SCENARIOS["StartFunction"](make_api)
    before = _sessions(scenario.api)

    # When the session's conditional put is applied but its answer times out, and botocore retries it
    put = CALLS["StartFunction"].index("dynamodb.PutItem")
    with injector.failing(put, Fault.LOST_ANSWER, Layer.HTTP):
        answer = scenario.send()

    # Then the retry was made, the flow started, and exactly its one session is stored
    assert str(injector.injected) == "dynamodb.PutItem"
    assert injector.slept
    assert answer.status == 200, answer.body
    assert _sessions(scenario.api) - before == {answer.json()["correlationId"]}


def test_a_staged_step_whose_versioned_update_was_applied_but_its_answer_lost_is_done_once(
    make_api: Callable[..., Api], injector: Injector
) -> None:
    # Given a staged flow at its validate step
    scenario = SCENARIOS["ValidateFunction"](make_api)

    # When the session's versioned update is applied but its answer times out, and botocore retries it
    update = len(CALLS["ValidateFunction"]) - 1 - CALLS["ValidateFunction"][::-1].index("dynamodb.UpdateItem")
    with injector.failing(update, Fault.LOST_ANSWER, Layer.HTTP):
        first = scenario.send()

    # Then the step succeeded once, and sent again it is the step's replay
    assert str(injector.injected) == "dynamodb.UpdateItem"
    assert first.status == 200, first.body
    again = scenario.send()
    assert again.status == 403
    assert again.json()["code"] == 8003
