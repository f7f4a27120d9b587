"""Production Mobile Auth through an operator's CAMARA Number Verification API (a fake one on loopback)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from phoneid_dev.operator import FakeOperator
from tests.device import Device
from tests.harness import Api
from tests.integration.test_possession_sandbox import start, validate

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances

NUMBER = "+12025550171"


def test_the_devices_own_number_passes_without_sms(
    make_api: Callable[..., Api], operator: FakeOperator
) -> None:
    # Given a production stack configured with the operator, and a phone whose SIM has the number
    api = make_api(tier="production", operator=operator)
    integrator = api.integrator()
    correlation_id, device = start(integrator, NUMBER)
    device.msisdn = NUMBER

    # When the device runs Mobile Auth (authorize over mobile data, code exchange, /verify)
    plan = device.session()
    after = device.mobile_auth()

    # Then possession passed with no SMS, and validate reports the number
    assert plan["methods"] == ["mobile-auth", "otp"]
    assert after["status"] == "passed"
    assert api.outbox() == []
    assert validate(integrator, correlation_id)["phoneNumber"] == NUMBER


def test_another_sim_fails_mobile_auth_and_falls_back_to_otp(
    make_api: Callable[..., Api], operator: FakeOperator
) -> None:
    api = make_api(tier="production", operator=operator)
    _, device = start(api.integrator(), NUMBER)
    device.msisdn = "+12025550172"

    after = device.mobile_auth()

    assert after["status"] == "pending"
    assert after["mobileAuth"] == {"status": "failed"}
    assert after["methods"] == ["otp"]


def test_off_the_mobile_network_the_operator_refuses_and_otp_remains(
    make_api: Callable[..., Api], operator: FakeOperator
) -> None:
    api = make_api(tier="production", operator=operator)
    _, device = start(api.integrator(), NUMBER)  # no msisdn: e.g. on Wi-Fi

    after = device.mobile_auth()

    assert after["status"] == "pending"
    assert after["methods"] == ["otp"]


def test_us_mobile_auth_without_a_number_learns_it_from_the_network(
    make_api: Callable[..., Api], operator: FakeOperator
) -> None:
    # Given a US mobile flow started with no phone number
    api = make_api(tier="production", operator=operator)
    integrator = api.integrator()
    started = integrator.post("/v3/start", {"flowType": "mobile"})
    device = Device(api, started.json()["authToken"], msisdn=NUMBER)

    # When Mobile Auth runs
    plan = device.session()
    after = device.mobile_auth()

    # Then the network's number is the validated one
    assert plan["phoneNumberNeeded"] is True
    assert after["status"] == "passed"
    assert validate(integrator, started.json()["correlationId"])["phoneNumber"] == NUMBER


def test_the_callback_works_once(make_api: Callable[..., Api], operator: FakeOperator) -> None:
    api = make_api(tier="production", operator=operator)
    _, device = start(api.integrator(), NUMBER)
    device.msisdn = NUMBER
    url = device.call("/mobile-auth").json()["mobileAuth"]["url"]
    callback = device._through_operator(url)

    first = api.get(callback)
    replay = api.get(callback)

    assert first.status == 200
    assert first.json()["status"] == "passed"
    assert replay.status == 403
    assert replay.json()["code"] == 8008


def test_without_an_operator_production_offers_otp_only(make_api: Callable[..., Api]) -> None:
    api = make_api(tier="production")
    _, device = start(api.integrator(), NUMBER)

    assert device.session()["methods"] == ["otp"]
    assert device.call("/mobile-auth").status == 403
