"""Step order of the staged flow: the expected step proceeds, a replay is 403, an early call is 400."""

from __future__ import annotations

import pytest

from phoneid.domain.errors import StepAlreadyCompleted, StepOutOfOrder
from phoneid.domain.flow import Step, check_turn, next_map

CORRELATION_ID = "0b6f3c1e-2a4d-4e8f-9c7a-1d2e3f4a5b6c"


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (Step.VALIDATE, {"v3-validate": "/v3/validate"}),
        (Step.CHALLENGE, {"v3-challenge": "/v3/challenge"}),
        (Step.COMPLETE, {"v3-complete": "/v3/complete"}),
        (Step.DONE, {"done": "done"}),
    ],
)
def test_next_map_names_the_call_to_make(step: Step, expected: dict[str, str]) -> None:
    # Given a step of the staged flow
    # When its next map is built
    result = next_map(step)

    # Then it is exactly the documented wire form
    assert result == expected


@pytest.mark.parametrize(
    ("called", "answered"),
    [
        (Step.VALIDATE, {Step.START}),
        (Step.CHALLENGE, {Step.START, Step.VALIDATE}),
        (Step.COMPLETE, {Step.START, Step.VALIDATE, Step.CHALLENGE}),
    ],
)
def test_the_expected_step_proceeds(called: Step, answered: set[Step]) -> None:
    # Given a session expecting ``called``
    # When ``called`` is called
    # Then no error is raised
    check_turn(called, called, frozenset(answered), CORRELATION_ID)


def test_a_step_already_answered_is_refused_with_403_naming_the_expected_step() -> None:
    # Given a session that answered validate and now expects challenge
    answered = frozenset({Step.START, Step.VALIDATE})

    # When validate is called again
    with pytest.raises(StepAlreadyCompleted) as raised:
        check_turn(Step.VALIDATE, Step.CHALLENGE, answered, CORRELATION_ID)

    # Then the replay gets 8003 with HTTP 403 and next names challenge
    error = raised.value
    assert (error.code, error.http_status) == (8003, 403)
    assert error.next_step == {"v3-challenge": "/v3/challenge"}
    assert error.correlation_id == CORRELATION_ID


@pytest.mark.parametrize("called", [Step.VALIDATE, Step.CHALLENGE, Step.COMPLETE])
def test_any_step_after_done_is_refused_with_403(called: Step) -> None:
    # Given a flow that ended after validate (possession failed, challenge never answered)
    answered = frozenset({Step.START, Step.VALIDATE})

    # When any step is called
    with pytest.raises(StepAlreadyCompleted) as raised:
        check_turn(called, Step.DONE, answered, CORRELATION_ID)

    # Then it is a 403 whose next map says the flow is done
    assert (raised.value.code, raised.value.http_status) == (8003, 403)
    assert raised.value.next_step == {"done": "done"}


@pytest.mark.parametrize(
    ("called", "expected", "answered", "next_step"),
    [
        (Step.CHALLENGE, Step.VALIDATE, {Step.START}, {"v3-validate": "/v3/validate"}),
        (Step.COMPLETE, Step.VALIDATE, {Step.START}, {"v3-validate": "/v3/validate"}),
        (Step.COMPLETE, Step.CHALLENGE, {Step.START, Step.VALIDATE}, {"v3-challenge": "/v3/challenge"}),
    ],
)
def test_a_step_before_its_turn_is_refused_with_400_naming_the_expected_step(
    called: Step, expected: Step, answered: set[Step], next_step: dict[str, str]
) -> None:
    # Given a session expecting an earlier step
    # When a later step is called
    with pytest.raises(StepOutOfOrder) as raised:
        check_turn(called, expected, frozenset(answered), CORRELATION_ID)

    # Then it is 8003 with HTTP 400 (not the replay error) and next names the expected step
    error = raised.value
    assert not isinstance(error, StepAlreadyCompleted)
    assert (error.code, error.http_status) == (8003, 400)
    assert error.next_step == next_step
