"""Random call orders, replays and clock jumps against the staged flow on the real stack.

A model of SPEC's rules predicts every answer: 200 only for the step the session expects, before it
expires; 400/8003 with the right ``next`` for a step before its turn; 403/8003 for a step already
answered or any step once the flow is done; 403/8008 for an unknown or expired correlationId.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from phoneid.domain.flow import Step, next_map
from tests.harness import Api, Integrator
from tests.integration.test_possession_sandbox import TOKEN_ONLY

BODIES = {
    Step.VALIDATE: lambda cid: {"correlationId": cid},
    Step.CHALLENGE: lambda cid: {"correlationId": cid, "dob": "1999-08-08"},
    Step.COMPLETE: lambda cid: {
        "correlationId": cid,
        "individual": {"firstName": "Kira", "lastName": "Petrova"},
    },
}
PATHS = {Step.VALIDATE: "/v3/validate", Step.CHALLENGE: "/v3/challenge", Step.COMPLETE: "/v3/complete"}


@dataclass
class Model:
    correlation_id: str
    created: datetime
    challenge_given: bool
    expected: Step = Step.VALIDATE
    answered: set[Step] = field(default_factory=lambda: {Step.START})

    def after(self, step: Step) -> Step:
        if step == Step.VALIDATE:  # the token-only user always passes possession
            return Step.COMPLETE if self.challenge_given else Step.CHALLENGE
        if step == Step.CHALLENGE:
            return Step.COMPLETE
        return Step.DONE


def test_the_session_state_machine_follows_spec(api: Api) -> None:
    class StagedFlow(RuleBasedStateMachine):
        sessions = Bundle("sessions")

        def __init__(self) -> None:
            super().__init__()
            self.integrator = Integrator(api, api.create_client())
            self.token_issued = api.clock.now()

        def _fresh_token(self) -> None:
            # One second per call keeps every call under the 25-per-second limit.
            api.clock.advance(seconds=1)
            # Access tokens live 60 minutes; the model is about sessions, so keep one valid.
            if api.clock.now() - self.token_issued > timedelta(minutes=50):
                self.integrator = Integrator(api, self.integrator.credentials)
                self.token_issued = api.clock.now()

        @initialize(target=sessions, with_dob=st.booleans())
        def first(self, with_dob: bool) -> Model:
            return self.start(with_dob)

        @rule(target=sessions, with_dob=st.booleans())
        def start(self, with_dob: bool) -> Model:
            self._fresh_token()
            fields = {"dob": "1999-08-08"} if with_dob else {}
            started = self.integrator.start(phoneNumber=TOKEN_ONLY, **fields)
            assert started.status == 200, started.body
            return Model(started.json()["correlationId"], api.clock.now(), with_dob)

        @rule(model=sessions, step=st.sampled_from([Step.VALIDATE, Step.CHALLENGE, Step.COMPLETE]))
        def call(self, model: Model, step: Step) -> None:
            self._fresh_token()
            answer = self.integrator.post(PATHS[step], BODIES[step](model.correlation_id))
            body = answer.json()
            if api.clock.now() >= model.created + timedelta(minutes=15):
                assert (answer.status, body["code"]) == (403, 8008)
            elif step == model.expected:
                assert answer.status == 200, answer.body
                model.answered.add(step)
                model.expected = model.after(step)
                assert body["next"] == next_map(model.expected)
            elif step in model.answered or model.expected == Step.DONE:
                assert (answer.status, body["code"]) == (403, 8003)
                assert body["next"] == next_map(model.expected)
            else:
                assert (answer.status, body["code"]) == (400, 8003)
                assert body["next"] == next_map(model.expected)

        @rule(minutes=st.integers(min_value=0, max_value=20))
        def time_passes(self, minutes: int) -> None:
            api.clock.advance(minutes=minutes)

        @rule(step=st.sampled_from([Step.VALIDATE, Step.CHALLENGE, Step.COMPLETE]))
        def unknown(self, step: Step) -> None:
            self._fresh_token()
            answer = self.integrator.post(PATHS[step], BODIES[step](str(uuid.uuid4())))
            assert (answer.status, answer.json()["code"]) == (403, 8008)

    run_state_machine_as_test(
        StagedFlow,
        settings=settings(
            max_examples=20,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
