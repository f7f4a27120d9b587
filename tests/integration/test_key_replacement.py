"""After `phoneid token-keys replace`, a token of a replaced key opens `/v3` no more once five minutes
have passed (docs/operations.md, "When a key may have been exposed"), whatever the verifiers' key
cache and the answer API Gateway keeps per token: on the local stack, which keeps authorizer answers
as API Gateway does (`ReauthorizeEvery` of the template, on the stack's clock)."""

from __future__ import annotations

from datetime import timedelta

from phoneid.services.token_keys import REPLACED_KEY_REFUSED_WITHIN, VERIFIERS_REREAD_EVERY
from phoneid_dev.gateway import AuthorizerAnswers, LocalGateway
from phoneid_dev.template import template
from tests.harness import Api
from tests.sandbox_numbers import TOKEN_ONLY

START = {"flowType": "mobile", "phoneNumber": TOKEN_ONLY}


def test_a_token_of_a_replaced_key_is_refused_once_the_promised_five_minutes_have_passed(api: Api) -> None:
    # Given API Gateway's answers kept, and two clients' access tokens, both of the day's key
    api.gateway = LocalGateway(api.stack, AuthorizerAnswers(api.clock.now))
    first, second = api.integrator().access_token, api.integrator().access_token
    # and the first used (the verifier reads the keys; API Gateway keeps its answer)
    assert api.post("/v3/start", START, token=first).status == 200

    # When the operator replaces the keys at once
    replaced_at = api.clock.now()
    api.container.token_key_rotation.replace()
    # and the second token is first used just before the verifier reads the keys again: the worst case,
    # an answer from the old keys, kept by API Gateway for its whole time (either answer is allowed)
    api.clock.advance(seconds=VERIFIERS_REREAD_EVERY.total_seconds() - 1)
    api.post("/v3/start", START, token=second)

    # Then once five minutes have passed since the replacement, neither token opens /v3
    api.clock.advance(seconds=(REPLACED_KEY_REFUSED_WITHIN - (api.clock.now() - replaced_at)).total_seconds())
    answers = [api.post("/v3/start", START, token=token) for token in (first, second)]
    assert [answer.status for answer in answers] == [401, 401]
    assert [answer.json()["code"] for answer in answers] == [8002, 8002]


def test_every_authorizers_kept_answer_and_the_verifiers_key_cache_add_up_to_the_promise() -> None:
    # A token is refused once the verifier has read the keys again and API Gateway's answer expired
    for name, authorizer in template().authorizers.items():
        kept = timedelta(seconds=authorizer.reauthorize_every)
        assert kept + VERIFIERS_REREAD_EVERY <= REPLACED_KEY_REFUSED_WITHIN, name
