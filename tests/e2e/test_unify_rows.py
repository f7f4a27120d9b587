"""Every unified-authentication Sandbox scenario against a running ``phoneid dev``, over real HTTP,
with the same Python device client the integration tests use."""

from __future__ import annotations

from typing import Any

import pytest

from tests.device import Device
from tests.e2e.conftest import HttpApi
from tests.integration.test_unify import status, unify
from tests.integration.test_unify import (
    test_first_visit_binds_a_key_after_otp_and_the_second_needs_no_sms as key_reuse_scenario,
)
from tests.integration.test_unify import (
    test_revoked_key_user_gets_8019_on_the_second_unify_and_a_full_flow_rebinds as revoked_key_scenario,
)
from tests.sandbox_numbers import (
    FALLBACK,
    HARD_FAIL_INTL,
    HARD_FAIL_NA,
    MOBILE_AUTH_FAIL,
    MOBILE_AUTH_PASS,
    OTP_FAIL,
    REPUTATION_FAIL,
)

pytestmark = pytest.mark.e2e


def run(device: Device, action: str) -> None:
    if action == "mobile-auth":
        device.mobile_auth()
    elif action == "register":
        device.register()
    else:  # "otp:<code>"
        device.send_otp()
        device.enter(action.removeprefix("otp:"))


# scenario, number, unify fields, what the device does, what unify-status then answers
ROWS: list[tuple[str, str, dict[str, Any], list[str], dict[str, Any]]] = [
    ("otp-fail", OTP_FAIL, {}, ["otp:1111"], {"success": False, "phoneNumber": OTP_FAIL}),
    ("mobile-auth-pass", MOBILE_AUTH_PASS, {}, ["mobile-auth", "register"], {"success": True}),
    ("mobile-auth-fail", MOBILE_AUTH_FAIL, {}, ["mobile-auth"], {"success": False}),
    ("mobile-auth-fail-otp-pass", FALLBACK, {}, ["mobile-auth", "otp:1234", "register"], {"success": True}),
    ("reputation-fail", REPUTATION_FAIL, {"checkReputation": True}, ["mobile-auth"], {"success": False}),
    ("hard-fail-na", HARD_FAIL_NA, {}, ["mobile-auth", "register"], {"success": False, "deviceId": ""}),
    ("hard-fail-intl", HARD_FAIL_INTL, {}, ["mobile-auth", "register"], {"success": False, "serviceId": ""}),
]


@pytest.mark.parametrize(
    ("number", "fields", "actions", "expected"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS]
)
def test_unify_row(
    remote: HttpApi, number: str, fields: dict[str, Any], actions: list[str], expected: dict[str, Any]
) -> None:
    integrator = remote.integrator()
    correlation_id, token = unify(integrator, number, **fields)
    device = Device(remote, token)

    for action in actions:
        run(device, action)
    answer = status(integrator, correlation_id).json()

    assert answer | expected == answer
    assert answer["phoneNumber"] == number
    if answer["success"]:
        assert answer["deviceId"] in device.keys  # the registered key is bound
    else:
        assert not answer.get("deviceId")
    if "mobile-auth" in actions and "otp:1234" not in actions:
        assert remote.outbox(number) == []  # Mobile Auth texts nothing


def test_otp_pass_binds_a_key_and_the_next_visit_needs_no_sms(remote: HttpApi) -> None:
    key_reuse_scenario(remote)  # type: ignore[arg-type]  # the same scenario, over HTTP


def test_revoked_key_gives_8019_on_the_second_unify(remote: HttpApi) -> None:
    revoked_key_scenario(remote)  # type: ignore[arg-type]
