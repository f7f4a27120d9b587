"""Step order of a possession flow: which call comes next, and what a call out of turn gets.

A session records the step it expects next and the steps already answered with a 200.
A call of the expected step may proceed; a call of an answered step (or any call once the flow is
done) is a replay: HTTP 403. Any other call is before its turn: 400. Both carry code 8003 and a
``next`` map naming the call to make.
"""

from __future__ import annotations

from enum import StrEnum

from phoneid.domain.errors import StepAlreadyCompleted, StepOutOfOrder


class Step(StrEnum):
    START = "start"
    VALIDATE = "validate"
    CHALLENGE = "challenge"
    COMPLETE = "complete"
    UNIFY_STATUS = "unify-status"
    UNIFY_BIND = "unify-bind"
    DONE = "done"


_NEXT_KEYS: dict[Step, tuple[str, str]] = {
    Step.VALIDATE: ("v3-validate", "/v3/validate"),
    Step.CHALLENGE: ("v3-challenge", "/v3/challenge"),
    Step.COMPLETE: ("v3-complete", "/v3/complete"),
    Step.UNIFY_STATUS: ("v3-unify-status", "/v3/unify-status"),
    Step.UNIFY_BIND: ("v3-unify-bind", "/v3/unify-bind"),
    Step.DONE: ("done", "done"),
}


def next_map(step: Step) -> dict[str, str]:
    key, value = _NEXT_KEYS[step]
    return {key: value}


def check_turn(called: Step, expected: Step, answered: frozenset[Step], correlation_id: str) -> None:
    """Raise the 8003 error for ``called`` unless it is the expected step."""
    if called == expected:
        return
    if called in answered or expected == Step.DONE:
        raise StepAlreadyCompleted(
            f"Step {called.value} already completed or the flow has ended; "
            f"the correlationId is no longer valid for it",
            next_step=next_map(expected),
            correlation_id=correlation_id,
        )
    raise StepOutOfOrder(
        f"Step {called.value} called out of order; the next call is {_NEXT_KEYS[expected][1]}",
        next_step=next_map(expected),
        correlation_id=correlation_id,
    )
