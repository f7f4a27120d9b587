"""Every Unify row of SPEC's Sandbox table against a running ``phoneid dev``, over real HTTP,
with the same Python device client the integration tests use."""

from __future__ import annotations

import pytest

from tests.device import Device
from tests.e2e.conftest import HttpApi
from tests.integration.test_possession_sandbox import (
    FALLBACK,
    HARD_FAIL_INTL,
    HARD_FAIL_NA,
    MOBILE_AUTH_FAIL,
    MOBILE_AUTH_PASS,
    OTP_FAIL,
    OTP_PASS,
    REPUTATION_FAIL,
    REVOKED_KEY,
)
from tests.integration.test_unify import first_visit, status, unify

pytestmark = pytest.mark.e2e


def test_otp_pass_binds_a_key_and_the_next_visit_needs_no_sms(remote: HttpApi) -> None:
    integrator = remote.integrator()
    device, first = first_visit(integrator, OTP_PASS)
    texts = len(remote.outbox(OTP_PASS))

    correlation_id, token = unify(integrator, OTP_PASS)
    proven = device.for_flow(token).prove()
    second = status(integrator, correlation_id).json()

    assert first["success"] is True
    assert first["deviceId"] in device.keys
    assert proven.json()["status"] == "passed"
    assert second == {
        "success": True,
        "serviceId": first["serviceId"],
        "deviceId": first["deviceId"],
        "phoneNumber": OTP_PASS,
    }
    assert len(remote.outbox(OTP_PASS)) == texts


def test_otp_fail(remote: HttpApi) -> None:
    integrator = remote.integrator()
    correlation_id, token = unify(integrator, OTP_FAIL)
    device = Device(remote, token)
    device.send_otp()
    device.enter("1111")

    answer = status(integrator, correlation_id).json()

    assert answer["success"] is False
    assert answer["phoneNumber"] == OTP_FAIL


def test_mobile_auth_pass_sends_no_sms(remote: HttpApi) -> None:
    integrator = remote.integrator()
    correlation_id, token = unify(integrator, MOBILE_AUTH_PASS)
    device = Device(remote, token)
    device.mobile_auth()
    device.register()

    answer = status(integrator, correlation_id).json()

    assert answer["success"] is True
    assert answer["deviceId"] in device.keys
    assert remote.outbox(MOBILE_AUTH_PASS) == []


def test_mobile_auth_fail(remote: HttpApi) -> None:
    integrator = remote.integrator()
    correlation_id, token = unify(integrator, MOBILE_AUTH_FAIL)
    Device(remote, token).mobile_auth()

    answer = status(integrator, correlation_id).json()

    assert answer["success"] is False
    assert answer["phoneNumber"] == MOBILE_AUTH_FAIL


def test_mobile_auth_fail_then_otp_pass(remote: HttpApi) -> None:
    integrator = remote.integrator()
    correlation_id, token = unify(integrator, FALLBACK)
    device = Device(remote, token)
    after_mobile_auth = device.mobile_auth()
    device.send_otp()
    device.enter("1234")

    assert after_mobile_auth["status"] == "pending"
    assert status(integrator, correlation_id).json()["success"] is True


def test_reputation_failure(remote: HttpApi) -> None:
    integrator = remote.integrator()
    correlation_id, token = unify(integrator, REPUTATION_FAIL, checkReputation=True)
    Device(remote, token).mobile_auth()

    answer = status(integrator, correlation_id).json()

    assert answer["success"] is False
    assert "9302" in answer["evaluation"]["risk"]["failureReasons"]


def test_revoked_key_gives_8019_on_the_second_unify(remote: HttpApi) -> None:
    integrator = remote.integrator()
    correlation_id, token = unify(integrator, REVOKED_KEY)
    device = Device(remote, token)
    device.mobile_auth()
    device.register()
    assert status(integrator, correlation_id).json()["success"] is True

    second_id, second_token = unify(integrator, REVOKED_KEY)
    refused = device.for_flow(second_token).prove()
    second = status(integrator, second_id)

    assert (refused.status, refused.json()["code"]) == (403, 8019)
    assert (second.status, second.json()["code"]) == (403, 8019)


@pytest.mark.parametrize("phone", [HARD_FAIL_NA, HARD_FAIL_INTL])
def test_hard_failure_binds_nothing(remote: HttpApi, phone: str) -> None:
    integrator = remote.integrator()
    correlation_id, token = unify(integrator, phone)
    device = Device(remote, token)
    device.mobile_auth()

    registered = device.register()
    answer = status(integrator, correlation_id).json()

    assert registered.status == 403
    assert (answer["success"], answer["deviceId"], answer["serviceId"]) == (False, "", "")
    assert answer["phoneNumber"] == phone
