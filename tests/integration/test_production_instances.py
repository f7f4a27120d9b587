"""Production routes each answered by a new instance, with and without an operator: nothing another
function cached (a data key, the day's signing key, the operator's credentials) stands in for the
calls a function makes on its own, so they run here as in AWS, and the IAM check sees them."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from phoneid_dev.operator import FakeOperator
from phoneid_dev.workflows import retry_waits
from tests.device import Device, latest_code, latest_link, pushed
from tests.harness import Api, Integrator
from tests.integration.test_connect_workflow import STEM, Connect, batch_file, output_of
from tests.integration.test_staged_flow_rules import call
from tests.unit.helpers import identity_record

pytestmark = pytest.mark.cold_instances

CUSTOMER = "+12025550142"
NAME = {"firstName": "Noor", "lastName": "Haddad"}
TARGET = "https://shop.example/done"


def production(make_api: Callable[..., Api], operator: FakeOperator | None = None) -> tuple[Api, Integrator]:
    """A production stack holding CUSTOMER's identity record, and an integrator of it."""
    api = make_api(tier="production", operator=operator)
    report = api.container.identity_import.run(json.dumps(identity_record(CUSTOMER)) + "\n", "jsonl")
    assert report.imported == 1
    return api, api.integrator()


def possessed(api: Api, integrator: Integrator) -> str:
    """A staged flow whose possession passed by OTP; its correlationId."""
    started = integrator.start(phoneNumber=CUSTOMER)
    assert started.status == 200, started.body
    device = Device(api, started.json()["authToken"])
    assert device.send_otp().status == 200
    assert device.enter(latest_code(api, CUSTOMER)).json()["status"] == "passed"
    return str(started.json()["correlationId"])


def test_complete_with_an_operator_asks_the_carriers_signals(
    make_api: Callable[..., Api], operator: FakeOperator
) -> None:
    # Given a production stack with an operator, and a flow past its challenge
    api, integrator = production(make_api, operator)
    correlation_id = possessed(api, integrator)
    call(integrator, "validate", correlation_id)
    assert call(integrator, "challenge", correlation_id, dob="1987-06-15").json()["success"] is True

    # When the integrator completes with the customer's details
    completed = call(integrator, "complete", correlation_id, individual={**NAME, "ssn": "123456789"})

    # Then the fraud policy, the carrier's sources among its signals, lets the customer through
    assert completed.status == 200, completed.body
    assert completed.json()["success"] is True


def test_unified_flows_ask_the_operators_signals_and_bind_the_key_the_device_proves(
    make_api: Callable[..., Api], operator: FakeOperator
) -> None:
    # Given a production stack with an operator, and a unified flow that asks for the reputation, whose
    # customer passed OTP and registered a key
    api, integrator = production(make_api, operator)
    asking = {"phoneNumber": CUSTOMER, "checkReputation": True}
    first = integrator.post("/v3/unify", {"possessionType": "mobile", **asking}).json()
    device = Device(api, first["authToken"])
    device.send_otp()
    device.enter(latest_code(api, CUSTOMER))
    assert device.register().status == 200
    status = integrator.post("/v3/unify-status", {"correlationId": first["correlationId"]})

    # When the next flow's integrator checks possession itself, and the device proves its key
    second = integrator.post("/v3/unify", {"possessionType": "none", **asking}).json()
    device = device.for_flow(second["authToken"])
    proved = device.prove()
    bound = integrator.post("/v3/unify-bind", {"correlationId": second["correlationId"]})

    # Then both pass with their evaluation, and the second binds the key the first did
    assert status.status == 200, status.body
    assert status.json()["success"] is True
    assert "evaluation" in status.json()
    assert proved.status == 200, proved.body
    assert bound.status == 200, bound.body
    assert bound.json()["success"] is True
    assert "evaluation" in bound.json()
    assert bound.json()["deviceId"] == status.json()["deviceId"]


def test_a_batch_verified_with_an_operator_asks_every_source(
    make_api: Callable[..., Api], operator: FakeOperator
) -> None:
    # Given a production stack with an operator
    _, integrator = production(make_api, operator)

    # When a batch verifies the customer
    answer = integrator.post(
        "/v3/verify/batch",
        {"items": [{"phoneNumber": CUSTOMER, "verificationType": "verifiedUser", **NAME}]},
    )

    # Then the customer is verified and enrolled
    assert answer.status == 200, answer.body
    [result] = answer.json()["results"]
    assert result["success"] == "true", result
    assert result["isEnrolled"] is True


def test_an_instant_link_is_texted_to_the_phone_and_reaches_the_waiting_desktop(
    make_api: Callable[..., Api],
) -> None:
    # Given a desktop flow whose page waits on the WebSocket
    api, integrator = production(make_api)
    started = integrator.start(phoneNumber=CUSTOMER, flowType="desktop", finalTargetUrl=TARGET)
    desktop = Device(api, started.json()["authToken"])
    connection_id, connected = desktop.connect_socket()

    # When the link is texted to the phone and opened there
    assert desktop.send_link().status == 200
    opened = api.get(latest_link(api, CUSTOMER))

    # Then the phone lands on the target and the desktop hears that possession passed
    assert connected == 200
    assert opened.status == 302
    assert opened.headers["Location"] == TARGET
    assert pushed(connection_id) == [{"type": "possession", "status": "passed"}]


def test_a_connect_batch_is_verified_with_the_operators_signals(
    make_api: Callable[..., Api], operator: FakeOperator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a production stack with an operator, and an onboarded Connect client
    monkeypatch.setattr(retry_waits, "retry_delay_scale", 0.0)
    api, _ = production(make_api, operator)
    connect = Connect(api)
    connect.onboard()

    # When the client uploads a file naming the customer
    connect.upload(batch_file(f"D,{CUSTOMER},Noor,Haddad,cust-1"))
    [execution] = connect.finished()

    # Then the batch is delivered with the customer verified
    assert execution["status"] == "SUCCEEDED"
    assert output_of(execution)["state"] == "delivered"
    [_, row, _] = connect.rows(f"{STEM}_output.csv")
    assert row[1] == CUSTOMER
    assert "pass" in row, row
