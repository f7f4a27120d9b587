"""The client API answers only the flow's authToken; the integrator's access token opens only /v3."""

from __future__ import annotations

import pytest

from tests.device import Device
from tests.harness import Api
from tests.integration.test_possession_sandbox import start
from tests.sandbox_numbers import OTP_PASS

UNAUTHORIZED = {"code": 8002, "message": "Unauthorized request: credentials missing or invalid"}


def test_an_access_token_cannot_call_the_client_api(api: Api) -> None:
    integrator = api.integrator()
    start(integrator, OTP_PASS)

    refused = api.post("/client/v1/session", {}, token=integrator.access_token)

    assert refused.status == 401
    assert refused.json() == UNAUTHORIZED


def test_an_auth_token_cannot_call_v3(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, device = start(integrator, OTP_PASS)

    refused = api.post("/v3/validate", {"correlationId": correlation_id}, token=device.auth_token)

    assert refused.status == 401


def test_an_auth_token_expires_with_its_session(api: Api) -> None:
    _, device = start(api.integrator(), OTP_PASS)

    api.clock.advance(minutes=15)

    assert device.call("/session").status == 401


def test_an_auth_token_acts_on_its_own_flow_only(api: Api) -> None:
    integrator = api.integrator()
    first_id, first = start(integrator, OTP_PASS)
    second_id, second = start(integrator, OTP_PASS)

    assert first.session()["correlationId"] == first_id
    assert second.session()["correlationId"] == second_id


def test_a_disabled_client_stops_its_flows(api: Api) -> None:
    integrator = api.integrator()
    _, device = start(integrator, OTP_PASS)

    api.container.client_admin.set_enabled(integrator.client_id, False)

    assert device.call("/session").status == 401


def test_browsers_may_call_the_client_api_cross_origin(api: Api) -> None:
    _, device = start(api.integrator(), OTP_PASS)

    origin = "https://shop.example.com"
    preflight = api.request(
        "OPTIONS",
        "/client/v1/otp",
        None,
        {"origin": origin, "access-control-request-method": "POST"},
    )
    answered = api.post("/client/v1/session", {}, token=device.auth_token, origin=origin)
    refused = api.post("/client/v1/session", {}, token="not.a.token", origin=origin)

    assert preflight.status == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    assert answered.headers["Access-Control-Allow-Origin"] == "*"
    assert refused.status == 401
    assert refused.headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", ["/v3/start", "/v3/verify", "/token", "/v3/identity"])
def test_server_to_server_calls_answer_no_cross_origin_call(api: Api, path: str) -> None:
    origin = "https://shop.example.com"
    integrator = api.integrator()

    preflight = api.request(
        "OPTIONS", path, None, {"origin": origin, "access-control-request-method": "POST"}
    )
    answered = integrator.post(path, {"phoneNumber": OTP_PASS}, origin=origin)

    assert preflight.status == 403  # no such route: a browser's preflight fails, so does its call
    assert preflight.json() == {"code": 8001, "message": "No endpoint matches this method and path"}
    assert "Access-Control-Allow-Origin" not in preflight.headers
    assert "Access-Control-Allow-Origin" not in answered.headers


def test_websocket_connect_needs_the_flows_auth_token(api: Api) -> None:
    _, desktop = start(
        api.integrator(), OTP_PASS, flowType="desktop", finalTargetUrl="https://shop.example.com/"
    )

    assert Device(api, "forged.auth.token").connect_socket()[1] == 401
    assert desktop.connect_socket()[1] == 200
