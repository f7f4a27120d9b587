"""What every /v3 endpoint does before and around its own rules: body limits, JSON, parameter errors,
clientRequestId, unexpected failures, and the 25-per-second rate limit."""

from __future__ import annotations

import json

import pytest

from tests.harness import Api, Integrator, LogRecorder
from tests.sandbox_numbers import TOKEN_ONLY

START = {"flowType": "mobile", "phoneNumber": TOKEN_ONLY}
V3 = ["/v3/start", "/v3/validate", "/v3/challenge", "/v3/complete", "/v3/unify", "/v3/unify-status"]


def padded(body: dict[str, object], size: int) -> str:
    """``body`` as JSON text of exactly ``size`` bytes (whitespace padding keeps it valid JSON)."""
    text = json.dumps(body)
    assert len(text) <= size
    return text[:-1] + " " * (size - len(text)) + "}"


def test_a_body_of_4096_bytes_is_read(api: Api) -> None:
    integrator = api.integrator()

    accepted = integrator.post("/v3/start", padded(START, 4096))

    assert accepted.status == 200


@pytest.mark.parametrize("path", V3)
def test_a_body_over_4096_bytes_is_400_8001(api: Api, path: str) -> None:
    integrator = api.integrator()

    refused = integrator.post(path, padded({**START, "clientRequestId": "order-1"}, 4097))

    assert refused.status == 400
    assert refused.json() == {
        "code": 8001,
        "message": "Malformed request: body is over 4096 bytes",
        "clientRequestId": "order-1",
    }


def test_a_body_over_api_gateways_own_limit_is_413_with_the_error_body(api: Api) -> None:
    integrator = api.integrator()

    refused = integrator.post("/v3/start", "{" + " " * (10 * 1024 * 1024) + "}")

    assert refused.status == 413
    assert set(refused.json()) == {"code", "message"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"flowType": "mobile",', "Malformed request: body is not valid JSON"),
        ("flowType=mobile", "Malformed request: body is not valid JSON"),
        ("", "Malformed request: body is not valid JSON"),
        ('["mobile"]', "Malformed request: body must be a JSON object"),
        ('"mobile"', "Malformed request: body must be a JSON object"),
    ],
)
@pytest.mark.parametrize("path", V3)
def test_a_body_that_is_not_a_json_object_is_400_8001(api: Api, path: str, body: str, message: str) -> None:
    integrator = api.integrator()

    refused = integrator.post(path, body)

    assert refused.status == 400
    assert refused.json() == {"code": 8001, "message": message}


def test_json_sent_as_another_content_type_is_400_8001(api: Api) -> None:
    integrator = api.integrator()

    refused = integrator.post("/v3/start", START, content_type="text/plain")

    # More cases in test_hostile_bodies.py.
    assert refused.status == 400
    assert refused.json() == {
        "code": 8001,
        "message": "Malformed request: Content-Type must be application/json",
    }


def test_each_invalid_parameter_is_named_and_its_value_is_not_echoed(api: Api) -> None:
    integrator = api.integrator()

    refused = integrator.post(
        "/v3/start",
        {"flowType": "tablet-911456711", "phoneNumber": TOKEN_ONLY, "dob": "1999-13-45", "ssn": "12"},
    )

    assert refused.status == 400
    body = refused.json()
    assert body["code"] == 8001
    for name in ("flowType", "dob", "ssn"):
        assert name in body["message"]
    for value in ("tablet-911456711", "1999-13-45"):
        assert value not in body["message"]
    assert "phoneNumber" not in body["message"]


def test_an_unknown_parameter_is_named(api: Api) -> None:
    integrator = api.integrator()

    refused = integrator.post("/v3/start", {**START, "colour": "blue"})

    assert refused.status == 400
    assert "colour" in refused.json()["message"]


def test_a_missing_required_parameter_is_named(api: Api) -> None:
    integrator = api.integrator()

    refused = integrator.post("/v3/start", {"phoneNumber": TOKEN_ONLY})

    assert refused.status == 400
    assert refused.json()["code"] == 8001
    assert "flowType" in refused.json()["message"]


@pytest.mark.parametrize("path", V3)
def test_client_request_id_is_echoed_on_errors(api: Api, path: str) -> None:
    integrator = api.integrator()

    refused = integrator.post(path, {"clientRequestId": "order-42", "bogus": True})

    assert refused.status == 400
    assert refused.json()["clientRequestId"] == "order-42"


def test_client_request_id_and_correlation_id_are_echoed_on_a_flow_error(api: Api) -> None:
    integrator = api.integrator()
    correlation_id = integrator.start(**START).json()["correlationId"]

    out_of_turn = integrator.post(
        "/v3/complete",
        {"correlationId": correlation_id, "clientRequestId": "r-7", "individual": {"firstName": "Kira"}},
    )

    assert out_of_turn.status == 400, out_of_turn.body
    assert out_of_turn.json() == {
        "code": 8003,
        "message": out_of_turn.json()["message"],
        "clientRequestId": "r-7",
        "correlationId": correlation_id,
        "next": {"v3-validate": "/v3/validate"},
    }


def test_success_responses_do_not_carry_client_request_id(api: Api) -> None:
    integrator = api.integrator()

    started = integrator.start(**START, clientRequestId="order-42")

    assert started.status == 200
    assert "clientRequestId" not in started.json()


def test_an_overlong_client_request_id_is_refused_and_not_echoed(api: Api) -> None:
    integrator = api.integrator()

    refused = integrator.start(**START, clientRequestId="x" * 129)

    assert refused.status == 400
    assert "clientRequestId" in refused.json()["message"]
    assert "clientRequestId" not in refused.json()


def test_an_unexpected_failure_is_500_8000_with_a_reference_that_is_logged(
    api: Api, logged: LogRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    integrator = api.integrator()

    def explode(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("table phoneid-sessions is on fire at /var/task/app.py")

    monkeypatch.setattr(type(api.container.staged), "start", explode)
    failed = integrator.start(**START, clientRequestId="order-9")

    assert failed.status == 500
    body = failed.json()
    assert set(body) == {"code", "message", "clientRequestId"}
    assert body["code"] == 8000
    assert body["clientRequestId"] == "order-9"
    assert "fire" not in failed.body
    assert "Traceback" not in failed.body
    reference = body["message"].rsplit("reference ", 1)[1].rstrip(")")
    logged_errors = [line for line in logged.lines if "unexpected error" in line]
    assert len(logged_errors) == 1
    assert reference in logged_errors[0]
    assert "RuntimeError" in logged_errors[0]


def spend(integrator: Integrator, times: int) -> list[int]:
    return [integrator.start(**START).status for _ in range(times)]


def test_25_requests_a_second_pass_and_the_26th_is_429_8018_with_the_headers(api: Api) -> None:
    integrator = api.integrator()
    assert integrator.access_token  # fetched first: the token call has a budget of its own
    window_end = int(api.clock.now().timestamp()) + 1

    statuses = spend(integrator, 25)
    refused = integrator.start(**START, clientRequestId="burst")

    assert statuses == [200] * 25
    assert refused.status == 429
    assert refused.json() == {
        "code": 8018,
        "message": "Rate limit exceeded; wait for Retry-After seconds",
        "clientRequestId": "burst",
    }
    assert refused.headers["X-RateLimit-Limit"] == "25"
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["X-RateLimit-Reset"] == str(window_end)
    assert refused.headers["Retry-After"] == "1"


def test_the_limit_is_per_client_and_per_second(api: Api) -> None:
    busy = api.integrator()
    quiet = api.integrator()
    assert quiet.access_token
    spend(busy, 25)

    other_client = quiet.start(**START)
    same_second = busy.start(**START)
    api.clock.advance(seconds=1)
    next_second = busy.start(**START)

    assert other_client.status == 200
    assert same_second.status == 429
    assert next_second.status == 200


def test_a_throttled_request_has_no_effect(api: Api) -> None:
    integrator = api.integrator()
    correlation_id = integrator.start(**START).json()["correlationId"]
    spend(integrator, 24)

    throttled = integrator.post("/v3/validate", {"correlationId": correlation_id})
    api.clock.advance(seconds=1)
    retried = integrator.post("/v3/validate", {"correlationId": correlation_id})

    assert throttled.status == 429
    assert retried.status == 200
    assert retried.json()["success"] is True


def test_the_token_endpoint_is_rate_limited_per_client_id(api: Api) -> None:
    credentials = api.create_client()
    statuses = [api.token_response(credentials.token_form()).status for _ in range(26)]

    assert statuses == [200] * 25 + [429]
