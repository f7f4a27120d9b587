"""`phoneid dev` keeps authorizer answers as API Gateway does: one authorizer run per token for
`ReauthorizeEvery` (240 s, ADR 0115) of the stack's clock; a client disabled meanwhile is refused
after it."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from phoneid_dev.gateway import AuthorizerAnswers, LocalGateway
from tests.harness import Api
from tests.sandbox_numbers import TOKEN_ONLY


@pytest.fixture
def runs(api: Api) -> Counter[str]:
    """The functions the gateway invokes, counted; the gateway keeps authorizer answers."""
    api.gateway = LocalGateway(api.stack, AuthorizerAnswers(api.clock.now))
    invoked: Counter[str] = Counter()
    invoke = api.stack.invoke

    def counted(logical_id: str, event: dict[str, Any], context: Any) -> Any:
        invoked[logical_id] += 1
        return invoke(logical_id, event, context)

    api.stack.invoke = counted  # type: ignore[method-assign]
    return invoked


def test_a_token_is_authorized_once_for_its_240_seconds(api: Api, runs: Counter[str]) -> None:
    integrator = api.integrator()

    # When three flows start with one access token, one more 239 seconds later, and one at 240 seconds
    started = [integrator.start(phoneNumber=TOKEN_ONLY).status for _ in range(3)]
    api.clock.advance(seconds=239)
    started.append(integrator.start(phoneNumber=TOKEN_ONLY).status)
    api.clock.advance(seconds=1)
    started.append(integrator.start(phoneNumber=TOKEN_ONLY).status)

    # Then each started, and the authorizer ran for the first and again once its answer expired
    assert started == [200, 200, 200, 200, 200]
    assert runs["AuthorizerFunction"] == 2
    assert runs["StartFunction"] == 5


def test_a_disabled_client_is_refused_once_the_kept_answer_expires(api: Api, runs: Counter[str]) -> None:
    integrator = api.integrator()
    assert integrator.start(phoneNumber=TOKEN_ONLY).status == 200

    # When the operator disables the client
    api.container.client_admin.set_enabled(integrator.client_id, False)

    # Then its token still opens /v3 until the answer API Gateway keeps expires, and not after
    assert integrator.start(phoneNumber=TOKEN_ONLY).status == 200
    api.clock.advance(seconds=240)
    refused = integrator.start(phoneNumber=TOKEN_ONLY)
    assert (refused.status, refused.json().get("code")) == (401, 8002)


def test_a_refused_token_is_asked_about_again(api: Api, runs: Counter[str]) -> None:
    integrator = api.integrator()
    token = integrator.access_token
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")

    statuses = [api.post("/v3/start", {"flowType": "mobile"}, token=forged).status for _ in range(2)]

    # A 401 is not kept: each request with the forged token runs the authorizer
    assert statuses == [401, 401]
    assert runs["AuthorizerFunction"] == 2
