"""The Python server SDK's client (clients/python) against a fake transport: the access token's life,
the API's errors as typed exceptions, and the Idempotency-Key header."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import httpx
import pytest
from phoneid_client import (
    AuthenticationError,
    BadRequestError,
    IdempotencyError,
    NotFoundError,
    PermissionDeniedError,
    PhoneIdClient,
    PhoneIdError,
    RateLimitError,
    ServerError,
)
from phoneid_client.models import IdentityEnrollRequest, StartRequest

from phoneid.api.errors import proxy_response
from phoneid.domain import errors as domain
from tests.fakes import FakeClock

BASE_URL = "https://api.phoneid.test"
SERVICE_ID = "551ef735-5d2e-4c45-b080-c25a128913b3"
CORRELATION_ID = "5b9d3d43-7696-4c77-9920-ec792a48005e"


@dataclass
class FakeApi:
    """Answers like the API: tokens from /token, and for other calls what ``answer`` says."""

    answer: Callable[[httpx.Request], httpx.Response]
    requests: list[httpx.Request] = field(default_factory=list)
    tokens_issued: int = 0
    token_life: int = 3600

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path == "/token":
            self.tokens_issued += 1
            form = parse_qs(request.content.decode())
            assert form["grant_type"] == ["client_credentials"]
            assert (form["client_id"], form["client_secret"]) == (["client-1"], ["secret-1"])
            return httpx.Response(
                200,
                json={
                    "access_token": f"token-{self.tokens_issued}",
                    "refresh_token": "refresh",
                    "token_type": "Bearer",
                    "expires_in": self.token_life,
                    "refresh_expires_in": 86400,
                },
            )
        return self.answer(request)

    def calls(self) -> list[httpx.Request]:
        return [request for request in self.requests if request.url.path != "/token"]


def as_the_api_answers(error: domain.PhoneIdError, request: dict[str, str] | None = None) -> httpx.Response:
    """The answer the API's own error mapper makes of a domain error."""
    result = proxy_response(error, request or {})
    return httpx.Response(result["statusCode"], headers=result["headers"], content=result["body"])


def enrolled(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"serviceId": SERVICE_ID, "success": True})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make_client(api: FakeApi, clock: FakeClock) -> PhoneIdClient:
    return PhoneIdClient(
        BASE_URL,
        "client-1",
        "secret-1",
        http=httpx.Client(transport=httpx.MockTransport(api.handle)),
        clock=lambda: clock.now().timestamp(),
    )


@pytest.fixture
def identity_api() -> FakeApi:
    return FakeApi(enrolled)


@pytest.fixture
def client(identity_api: FakeApi, clock: FakeClock) -> Iterator[PhoneIdClient]:
    with make_client(identity_api, clock) as made:
        yield made


def bearer(request: httpx.Request) -> str:
    return request.headers["authorization"]


# --- The access token ---


def test_one_token_serves_every_call_while_it_has_more_than_a_tenth_of_its_life(
    client: PhoneIdClient, identity_api: FakeApi, clock: FakeClock
) -> None:
    client.enroll_identity(IdentityEnrollRequest(phoneNumber="+12025550123"))
    clock.advance(seconds=3600 - 361)  # 6 min 1 s left of its hour
    client.enroll_identity(IdentityEnrollRequest(phoneNumber="+12025550123"))

    assert identity_api.tokens_issued == 1
    assert [bearer(call) for call in identity_api.calls()] == ["Bearer token-1", "Bearer token-1"]


def test_a_token_with_a_tenth_of_its_life_left_is_fetched_again_before_the_call(
    client: PhoneIdClient, identity_api: FakeApi, clock: FakeClock
) -> None:
    client.enroll_identity(IdentityEnrollRequest(phoneNumber="+12025550123"))
    clock.advance(seconds=3600 - 360)  # 6 minutes left: a tenth of the hour
    client.enroll_identity(IdentityEnrollRequest(phoneNumber="+12025550123"))

    assert identity_api.tokens_issued == 2
    assert [bearer(call) for call in identity_api.calls()] == ["Bearer token-1", "Bearer token-2"]


def test_a_short_lived_token_is_fetched_again_when_under_60_seconds_are_left(clock: FakeClock) -> None:
    api = FakeApi(enrolled, token_life=300)  # a tenth would be 30 s: the 60 s floor applies
    with make_client(api, clock) as client:
        client.access_token()
        clock.advance(seconds=239)
        client.access_token()
        assert api.tokens_issued == 1
        clock.advance(seconds=1)
        client.access_token()
        assert api.tokens_issued == 2


def test_a_call_refused_with_401_is_sent_once_more_with_a_new_token(clock: FakeClock) -> None:
    def refuse_the_first_token(request: httpx.Request) -> httpx.Response:
        if bearer(request) == "Bearer token-1":
            return as_the_api_answers(domain.Unauthorized())
        return enrolled(request)

    api = FakeApi(refuse_the_first_token)
    with make_client(api, clock) as client:
        answer = client.enroll_identity(IdentityEnrollRequest(phoneNumber="+12025550123"))

    assert answer.serviceId == SERVICE_ID
    assert [bearer(call) for call in api.calls()] == ["Bearer token-1", "Bearer token-2"]


def test_a_second_401_raises_authentication_error_without_a_third_try(clock: FakeClock) -> None:
    api = FakeApi(lambda request: as_the_api_answers(domain.Unauthorized()))
    with make_client(api, clock) as client, pytest.raises(AuthenticationError) as raised:
        client.get_identity(SERVICE_ID)

    assert (raised.value.status, raised.value.code) == (401, 8002)
    assert len(api.calls()) == 2


def test_credentials_the_api_refuses_raise_authentication_error(clock: FakeClock) -> None:
    def refuse_the_secret(request: httpx.Request) -> httpx.Response:
        return as_the_api_answers(domain.Unauthorized())

    api = FakeApi(enrolled)
    api.handle = refuse_the_secret  # type: ignore[method-assign]  # /token itself refuses
    with make_client(api, clock) as client, pytest.raises(AuthenticationError) as raised:
        client.access_token()

    assert raised.value.code == 8002
    assert raised.value.message == "Unauthorized request: credentials missing or invalid"


# --- Errors ---


@pytest.mark.parametrize(
    ("error", "expected", "status", "code"),
    [
        (domain.MalformedRequest(problems={"phoneNumber": "Field required"}), BadRequestError, 400, 8001),
        (domain.Unauthorized(), AuthenticationError, 401, 8002),
        (domain.SandboxAccessDenied(), PermissionDeniedError, 403, 8009),
        (domain.IdentityNotFound(), NotFoundError, 404, 8011),
        (domain.IdempotencyKeyReused(), IdempotencyError, 422, 8021),
        (domain.RateLimitExceeded(), RateLimitError, 429, 8018),
        (domain.InternalError(), ServerError, 500, 8000),
    ],
)
def test_each_error_answer_raises_its_class_with_the_status_code_and_message(
    clock: FakeClock, error: domain.PhoneIdError, expected: type[Exception], status: int, code: int
) -> None:
    api = FakeApi(lambda request: as_the_api_answers(error, {"clientRequestId": "req-1"}))
    with make_client(api, clock) as client, pytest.raises(expected) as raised:
        client.get_identity(SERVICE_ID, client_request_id="req-1")

    assert isinstance(raised.value, PhoneIdError)
    assert (raised.value.status, raised.value.code, raised.value.message) == (status, code, error.message)
    assert raised.value.client_request_id == "req-1"
    assert str(raised.value) == f"{status} {code}: {error.message}"


def test_the_validation_message_names_each_parameter(clock: FakeClock) -> None:
    refused = domain.MalformedRequest(problems={"phoneNumber": "Field required"})
    api = FakeApi(lambda request: as_the_api_answers(refused))
    with make_client(api, clock) as client, pytest.raises(BadRequestError) as raised:
        client.enroll_identity(IdentityEnrollRequest(phoneNumber="+12025550123"))

    assert raised.value.message == "Invalid parameters: phoneNumber: Field required"


def test_a_rate_limit_error_carries_retry_after(clock: FakeClock) -> None:
    api = FakeApi(lambda request: as_the_api_answers(domain.RateLimitExceeded(headers={"Retry-After": "7"})))
    with make_client(api, clock) as client, pytest.raises(RateLimitError) as raised:
        client.list_identities()

    assert raised.value.retry_after == 7


def test_an_out_of_order_step_carries_next_and_the_correlation_id(clock: FakeClock) -> None:
    body = {
        "code": 8003,
        "message": "Step already completed for this correlationId",
        "correlationId": CORRELATION_ID,
        "next": {"v3-challenge": "/v3/challenge"},
    }
    api = FakeApi(lambda request: httpx.Response(403, json=body))
    with make_client(api, clock) as client, pytest.raises(PermissionDeniedError) as raised:
        client.validate(CORRELATION_ID)

    assert raised.value.correlation_id == CORRELATION_ID
    assert raised.value.next == {"v3-challenge": "/v3/challenge"}


def test_an_answer_that_is_not_the_apis_error_body_still_raises_with_its_status(clock: FakeClock) -> None:
    api = FakeApi(lambda request: httpx.Response(502, text="<html>Bad Gateway</html>"))
    with make_client(api, clock) as client, pytest.raises(ServerError) as raised:
        client.get_identity(SERVICE_ID)

    assert (raised.value.status, raised.value.code) == (502, None)
    assert raised.value.message == "<html>Bad Gateway</html>"


# --- Idempotency-Key, bodies and paths ---


def test_the_idempotency_key_is_sent_as_given_on_the_calls_that_take_it(
    client: PhoneIdClient, identity_api: FakeApi
) -> None:
    client.enroll_identity(
        IdentityEnrollRequest(phoneNumber="+12025550123"),
        idempotency_key="8e03978e-40d5-43e8-bc93-6894a57f9324",
    )
    client.enroll_identity(IdentityEnrollRequest(phoneNumber="+12025550123"))

    keyed, bare = identity_api.calls()
    assert keyed.headers["idempotency-key"] == "8e03978e-40d5-43e8-bc93-6894a57f9324"
    assert "idempotency-key" not in bare.headers


def test_a_body_carries_only_the_fields_set(clock: FakeClock) -> None:
    started = {"authToken": "eyJ", "correlationId": CORRELATION_ID, "next": {"v3-validate": "/v3/validate"}}
    api = FakeApi(lambda request: httpx.Response(200, json=started))
    with make_client(api, clock) as client:
        answer = client.start(
            StartRequest(flowType="mobile", phoneNumber="+12025550111"), idempotency_key="k-1"
        )

    (sent,) = api.calls()
    assert json.loads(sent.content) == {"flowType": "mobile", "phoneNumber": "+12025550111"}
    assert sent.headers["content-type"] == "application/json"
    assert (answer.correlationId, answer.next) == (CORRELATION_ID, {"v3-validate": "/v3/validate"})


def test_a_phone_number_in_the_path_is_escaped(clock: FakeClock) -> None:
    api = FakeApi(lambda request: httpx.Response(200, json={"items": []}))
    with make_client(api, clock) as client:
        client.lookup_identities("+12025550123")

    (sent,) = api.calls()
    assert sent.url.raw_path == b"/v3/identity/%2B12025550123/lookup"
