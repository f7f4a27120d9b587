"""The staged flow against a model of its session state table (docs/api.md), driven by random call sequences.

One stack serves the whole run; each generated case gets a fresh client, so cases never share sessions
(nor a rate-limit window). The model holds, per session, the step expected next, the steps answered
with a 200, when it started and whether start carried challenge data.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from phoneid_dev.gateway import HttpResponse
from tests.harness import Api
from tests.integration.test_staged_flow_rules import (
    COMPLETED,
    KIRA,
    LIFETIME_MINUTES,
    NEXT,
    UUID4,
    error_of,
    out_of_turn,
    stored,
    valid_body,
)
from tests.sandbox_numbers import TOKEN_ONLY

STEPS = ("validate", "challenge", "complete")
LIFETIME = timedelta(minutes=LIFETIME_MINUTES)
TOKEN_REFRESH = timedelta(minutes=30)  # well inside the access token's 60 minutes


@dataclass
class Model:
    correlation_id: str
    created: datetime
    challenge_given: bool
    next: str = "validate"
    answered: set[str] = field(default_factory=lambda: {"start"})

    def expired(self, now: datetime) -> bool:
        return now >= self.created + LIFETIME

    def following(self, step: str) -> str:
        """The step a 200 of ``step`` leads to (the token-only user passes everything sent here)."""
        if step == "validate":
            return "complete" if self.challenge_given else "challenge"
        return {"challenge": "complete", "complete": "done"}[step]

    def success_body(self, step: str) -> dict[str, Any]:
        following = NEXT[self.following(step)]
        if step == "validate":
            return {
                "success": True,
                "challengeMissing": not self.challenge_given,
                "phoneNumber": TOKEN_ONLY,
                "next": following,
            }
        if step == "challenge":
            return {"success": True, "individual": KIRA, "next": following}
        return COMPLETED


def test_the_staged_flow_follows_its_state_table(api: Api) -> None:
    seen: set[str] = set()  # every correlationId of the whole run: none may repeat

    class StagedFlow(RuleBasedStateMachine):
        sessions = Bundle("sessions")

        def __init__(self) -> None:
            super().__init__()
            self.integrator = api.integrator()
            self.token = self.integrator.access_token
            self.token_issued = api.clock.now()
            # In creation order: rules pick sessions by position, never by their random ids.
            self.models: dict[str, Model] = {}

        # --- calls --------------------------------------------------------------------------

        def post(self, step: str, body: dict[str, Any]) -> HttpResponse:
            if api.clock.now() - self.token_issued >= TOKEN_REFRESH:
                self.token = api.token(self.integrator.credentials)
                self.token_issued = api.clock.now()
            return api.post(f"/v3/{step}", body, token=self.token)

        def check_call(self, model: Model, step: str) -> None:
            """Send a correct ``step`` and hold the answer and the stored item to the model."""
            response = self.post(step, valid_body(step, model.correlation_id))
            correlation_id = model.correlation_id
            if model.expired(api.clock.now()):
                assert response.status == 403, response.body
                assert error_of(response) == {"code": 8008, "correlationId": correlation_id}
            elif step == model.next:
                assert response.status == 200, response.body
                assert response.json() == model.success_body(step)
                model.next = model.following(step)
                model.answered.add(step)
            elif step in model.answered or model.next == "done":
                assert response.status == 403, response.body
                assert error_of(response) == out_of_turn(correlation_id, model.next)
            else:
                assert response.status == 400, response.body
                assert error_of(response) == out_of_turn(correlation_id, model.next)
            # Expired or not, the item stays in the table and says what the model says.
            item = stored(api, self.integrator.client_id, correlation_id)
            assert item is not None
            assert item["nextStep"] == model.next
            assert set(item["answered"]) == model.answered

        # --- rules --------------------------------------------------------------------------

        @rule(target=sessions, with_dob=st.booleans())
        def start(self, with_dob: bool) -> str:
            fields = {"dob": "1999-08-08"} if with_dob else {}
            response = self.post("start", {"flowType": "mobile", "phoneNumber": TOKEN_ONLY, **fields})
            assert response.status == 200, response.body
            body = response.json()
            correlation_id = str(body["correlationId"])
            assert body["next"] == NEXT["validate"]
            assert UUID4.match(correlation_id), correlation_id
            assert correlation_id not in seen
            seen.add(correlation_id)
            self.models[correlation_id] = Model(correlation_id, api.clock.now(), challenge_given=with_dob)
            return correlation_id

        @rule(correlation_id=sessions, step=st.sampled_from(STEPS))
        def call_step(self, correlation_id: str, step: str) -> None:
            self.check_call(self.models[correlation_id], step)

        @precondition(lambda self: any(m.next != "done" for m in self.models.values()))
        @rule(data=st.data())
        def proceed(self, data: st.DataObject) -> None:
            """The step the session expects (so that flows also get to their end), expired or not."""
            candidates = [cid for cid, m in self.models.items() if m.next != "done"]
            model = self.models[data.draw(st.sampled_from(candidates), label="session")]
            self.check_call(model, model.next)

        @precondition(lambda self: any(len(m.answered) > 1 for m in self.models.values()))
        @rule(data=st.data())
        def replay(self, data: st.DataObject) -> None:
            candidates = [cid for cid, m in self.models.items() if len(m.answered) > 1]
            model = self.models[data.draw(st.sampled_from(candidates), label="session")]
            step = data.draw(st.sampled_from(sorted(model.answered - {"start"})), label="step")
            self.check_call(model, step)

        @rule(minutes=st.integers(min_value=0, max_value=20))
        def wait(self, minutes: int) -> None:
            api.clock.advance(minutes=minutes)

        @rule(step=st.sampled_from(STEPS), unknown=st.uuids(version=4))
        def call_unknown(self, step: str, unknown: uuid.UUID) -> None:
            response = self.post(step, valid_body(step, str(unknown)))
            assert response.status == 403, response.body
            assert error_of(response) == {"code": 8008, "correlationId": str(unknown)}

    run_state_machine_as_test(
        StagedFlow,
        settings=settings(
            max_examples=25,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
