"""Every possession scenario of the Sandbox (docs/sandbox.md), driven like the web SDK, and what
validate then says."""

from __future__ import annotations

from typing import Any

import jwt
import pytest

from tests.device import Device, latest_link, pushed
from tests.harness import Api, Integrator
from tests.sandbox_numbers import (
    FALLBACK,
    HARD_FAIL_INTL,
    HARD_FAIL_NA,
    MOBILE_AUTH_FAIL,
    MOBILE_AUTH_PASS,
    OTP_FAIL,
    OTP_PASS,
    REPUTATION_FAIL,
    REVOKED_KEY,
    TOKEN_ONLY,
)

TARGET = "https://shop.example.com/verified"


def start(integrator: Integrator, phone: str, **fields: Any) -> tuple[str, Device]:
    started = integrator.start(phoneNumber=phone, **fields)
    assert started.status == 200, started.body
    body = started.json()
    return body["correlationId"], Device(integrator.api, body["authToken"])


def validate(integrator: Integrator, correlation_id: str) -> dict[str, Any]:
    response = integrator.post("/v3/validate", {"correlationId": correlation_id})
    assert response.status == 200, response.body
    return dict(response.json())


def test_otp_user_passes_with_1234_and_no_real_sms_leaves(api: Api) -> None:
    # Given a mobile flow for the OTP test user
    integrator = api.integrator()
    correlation_id, device = start(integrator, OTP_PASS)

    # When the device asks what to do, has the code sent and enters 1234
    plan = device.session()
    sent = device.send_otp()
    entered = device.enter("1234")

    # Then OTP was the only method, the message went to the Sandbox topic, and validate says passed
    assert plan["methods"] == ["otp"]
    assert plan["otp"] == {"length": 4, "sent": False, "sendsLeft": 3, "entriesLeft": 1}
    assert sent.status == 200
    assert [m["via"] for m in api.outbox(OTP_PASS)] == ["sandbox-topic"]
    assert entered.json()["status"] == "passed"
    assert validate(integrator, correlation_id)["success"] is True


@pytest.mark.parametrize("code", ["1111", "1234"])
def test_otp_fail_user_fails_with_any_code(api: Api, code: str) -> None:
    integrator = api.integrator()
    correlation_id, device = start(integrator, OTP_FAIL)

    device.send_otp()
    entered = device.enter(code)

    assert entered.json()["status"] == "failed"
    assert entered.json()["lastError"] == "otp-invalid"
    validated = validate(integrator, correlation_id)
    assert validated == {"success": False, "challengeMissing": True, "next": {"done": "done"}}


def test_mobile_auth_user_passes_with_no_input_and_no_sms(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, device = start(integrator, MOBILE_AUTH_PASS)

    plan = device.session()
    after = device.mobile_auth()

    assert plan["methods"] == ["mobile-auth", "otp"]
    assert after["status"] == "passed"
    assert after["mobileAuth"] == {"status": "passed"}
    assert api.outbox(MOBILE_AUTH_PASS) == []
    assert validate(integrator, correlation_id)["phoneNumber"] == MOBILE_AUTH_PASS


@pytest.mark.parametrize("phone", [MOBILE_AUTH_FAIL, HARD_FAIL_NA, HARD_FAIL_INTL])
def test_mobile_auth_failure_without_fallback_fails_possession(api: Api, phone: str) -> None:
    integrator = api.integrator()
    correlation_id, device = start(integrator, phone)

    plan = device.session()
    after = device.mobile_auth()
    refused_otp = device.send_otp()

    assert plan["methods"] == ["mobile-auth"]
    assert after["status"] == "failed"
    assert refused_otp.status == 403
    assert api.outbox(phone) == []
    assert validate(integrator, correlation_id)["success"] is False


def test_mobile_auth_failure_falls_back_to_otp_which_passes(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, device = start(integrator, FALLBACK)

    after_mobile_auth = device.mobile_auth()
    device.send_otp()
    entered = device.enter("1234")

    assert after_mobile_auth["status"] == "pending"
    assert after_mobile_auth["methods"] == ["otp"]
    assert after_mobile_auth["lastError"] == "mobile-auth-failed"
    assert entered.json()["status"] == "passed"
    assert validate(integrator, correlation_id)["success"] is True


@pytest.mark.parametrize("phone", [REPUTATION_FAIL, REVOKED_KEY])
def test_users_scripted_for_later_checks_pass_mobile_auth(api: Api, phone: str) -> None:
    integrator = api.integrator()
    correlation_id, device = start(integrator, phone)

    assert device.mobile_auth()["status"] == "passed"
    assert validate(integrator, correlation_id)["success"] is True


def test_token_only_user_needs_no_client(api: Api) -> None:
    integrator = api.integrator()
    _, device = start(integrator, TOKEN_ONLY)

    plan = device.session()

    assert plan["status"] == "passed"
    assert "methods" not in plan


def test_desktop_instant_link_pushes_to_the_waiting_socket_and_redirects(api: Api) -> None:
    # Given a desktop flow whose page waits on the WebSocket
    integrator = api.integrator()
    correlation_id, desktop = start(integrator, OTP_PASS, flowType="desktop", finalTargetUrl=TARGET)
    connection_id, connected = desktop.connect_socket()

    # When the link is texted and the customer opens it on the phone
    plan = desktop.session()
    desktop.send_link()
    opened = api.get(latest_link(api, OTP_PASS))
    reopened = api.get(latest_link(api, OTP_PASS))

    # Then the phone lands on finalTargetUrl, the desktop hears "passed", and the link works once
    assert connected == 200
    assert plan["methods"] == ["instant-link"]
    assert plan["instantLink"]["websocketUrl"].startswith("wss://")
    assert opened.status == 302
    assert opened.headers["Location"] == TARGET
    assert pushed(connection_id) == [{"type": "possession", "status": "passed"}]
    assert reopened.status == 410
    assert validate(integrator, correlation_id)["success"] is True


def test_flows_offer_only_their_methods(api: Api) -> None:
    integrator = api.integrator()
    _, mobile = start(integrator, OTP_PASS)
    _, desktop = start(integrator, OTP_PASS, flowType="desktop", finalTargetUrl=TARGET)

    link_on_mobile = mobile.send_link()
    otp_on_desktop = desktop.send_otp()
    socket_on_mobile = mobile.connect_socket()[1]

    assert link_on_mobile.status == 403
    assert "instant-link is not available" in link_on_mobile.json()["message"]
    assert otp_on_desktop.status == 403
    assert socket_on_mobile == 403
    assert api.outbox(OTP_PASS) == []


@pytest.mark.parametrize(
    ("phone", "fields"),
    [
        (OTP_PASS, {}),
        (MOBILE_AUTH_PASS, {}),
        (FALLBACK, {}),
        (HARD_FAIL_NA, {}),
        (OTP_PASS, {"flowType": "desktop", "finalTargetUrl": TARGET}),
    ],
    ids=["otp", "mobile-auth", "fallback", "hard-fail", "desktop"],
)
def test_a_staged_auth_token_names_what_the_session_offers_at_start(
    api: Api, phone: str, fields: dict[str, Any]
) -> None:
    # Given a staged flow just started
    _, device = start(api.integrator(), phone, **fields)

    # When the SDK reads its authToken, and the session it would otherwise have asked for first
    claims = jwt.decode(device.auth_token, options={"verify_signature": False})
    session = device.session()

    # Then both say the same: the methods in order, and whether the SDK must ask for a number
    assert claims["flow"] == "staged"
    assert (claims["methods"], claims["phoneNumberNeeded"]) == (
        session["methods"],
        session["phoneNumberNeeded"],
    )


def test_a_unified_auth_token_names_no_methods(api: Api) -> None:
    # A unified flow's client reads the session first: it may choose the flow type or prove a key
    started = api.integrator().post("/v3/unify", {"possessionType": "mobile", "phoneNumber": OTP_PASS})
    claims = jwt.decode(started.json()["authToken"], options={"verify_signature": False})

    assert claims["flow"] == "unify"
    assert "methods" not in claims
    assert "phoneNumberNeeded" not in claims
