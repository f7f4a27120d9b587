"""The staged flow on the production tier: no scripted test users, possession run by the customer's
device (OTP), and identities read from the operator's identity table."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.device import Device, latest_code
from tests.harness import Api, Integrator
from tests.integration.test_staged_flow_rules import NEXT, begin, call, error_of, stored
from tests.sandbox_numbers import TOKEN_ONLY
from tests.unit.helpers import identity_record

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances

CUSTOMER = "+12025550142"  # in the identity table once imported
STRANGER = "+12025550143"  # never imported
IDENTITY = identity_record(CUSTOMER)
FAILED = {"success": False, "challengeMissing": True, "next": NEXT["done"]}


def production(make_api: Callable[..., Api]) -> tuple[Api, Integrator]:
    """A production stack holding IDENTITY in its identity table, and an integrator of it."""
    api = make_api(tier="production")
    report = api.container.identity_import.run(json.dumps(IDENTITY) + "\n", "jsonl")
    assert (report.imported, report.rejected) == (1, [])
    return api, api.integrator()


def possessed(api: Api, integrator: Integrator, phone: str, **fields: str) -> str:
    """Start a flow and pass possession on the customer's device by OTP; returns the correlationId."""
    started = integrator.start(phoneNumber=phone, **fields)
    assert started.status == 200, started.body
    device = Device(api, started.json()["authToken"])
    assert device.send_otp().status == 200
    entered = device.enter(latest_code(api, phone))
    assert entered.json()["status"] == "passed", entered.body
    return str(started.json()["correlationId"])


@pytest.mark.parametrize("phone", [TOKEN_ONLY, "+12025550101", "+12025550199", "+12025550110"])
def test_sandbox_numbers_are_ordinary_numbers_in_production(make_api: Callable[..., Api], phone: str) -> None:
    # Given the production stack
    api, integrator = production(make_api)

    # When an integrator starts with a Sandbox test number (or one that is no test user) and validates
    correlation_id = begin(integrator, phone)
    validated = call(integrator, "validate", correlation_id)

    # Then start is accepted (no 8007, no 8009) and, with no possession by a device, validate fails
    assert validated.status == 200
    assert validated.json() == FAILED
    item = stored(api, integrator.client_id, correlation_id)
    assert item is not None
    assert "sandboxScenario" not in item
    assert item["possession"]["status"] == "pending"


def test_production_challenge_returns_the_identity_with_the_last_four_of_the_ssn(
    make_api: Callable[..., Api],
) -> None:
    # Given a production customer in the identity table who passed possession by OTP
    api, integrator = production(make_api)
    correlation_id = possessed(api, integrator, CUSTOMER)

    # When the integrator validates, challenges with the date of birth and completes
    validated = call(integrator, "validate", correlation_id)
    challenged = call(integrator, "challenge", correlation_id, dob="1987-06-15")
    completed = call(
        integrator,
        "complete",
        correlation_id,
        individual={"firstName": "Noor", "lastName": "Haddad", "ssn": "123456789"},
    )

    # Then validate passed, the individual comes from the table with only the SSN's last four
    assert validated.json() == {
        "success": True,
        "challengeMissing": True,
        "phoneNumber": CUSTOMER,
        "next": NEXT["challenge"],
    }
    assert challenged.status == 200
    assert challenged.json() == {
        "success": True,
        "individual": {**{k: v for k, v in IDENTITY.items() if k != "phoneNumber"}, "ssn": "6789"},
        "next": NEXT["complete"],
    }
    # And complete passes against the stored identity
    assert completed.json() == {
        "success": True,
        "next": NEXT["done"],
        "evaluation": {
            "identification": {"result": "pass"},
            "authentication": {"result": "pass"},
            "compliance": {"result": "pass"},
            "risk": {"result": "pass"},
        },
    }


def test_production_challenge_with_a_wrong_ssn_returns_no_individual(make_api: Callable[..., Api]) -> None:
    # Given a production customer in the identity table who passed possession
    api, integrator = production(make_api)
    correlation_id = possessed(api, integrator, CUSTOMER)
    call(integrator, "validate", correlation_id)

    # When the challenge carries the wrong last four
    challenged = call(integrator, "challenge", correlation_id, ssn="6780")

    # Then it fails and ends the flow
    assert challenged.json() == {"success": False, "next": NEXT["done"]}


def test_production_challenge_for_a_number_with_no_identity_fails(make_api: Callable[..., Api]) -> None:
    # Given a customer who passed possession but has no identity in the table
    api, integrator = production(make_api)
    correlation_id = possessed(api, integrator, STRANGER)
    call(integrator, "validate", correlation_id)

    # When the integrator challenges
    challenged = call(integrator, "challenge", correlation_id, dob="1987-06-15")

    # Then there is no individual to return
    assert challenged.status == 200
    assert challenged.json() == {"success": False, "next": NEXT["done"]}


def test_production_complete_for_a_number_with_no_identity_fails_with_9003(
    make_api: Callable[..., Api],
) -> None:
    # Given a customer who passed possession, gave the dob at start, and has no identity in the table
    api, integrator = production(make_api)
    correlation_id = possessed(api, integrator, STRANGER, dob="1987-06-15")
    validated = call(integrator, "validate", correlation_id)

    # When the integrator completes
    completed = call(
        integrator, "complete", correlation_id, individual={"firstName": "Noor", "lastName": "Haddad"}
    )

    # Then identification fails (identity not found), and so does authentication: no identity and
    # nothing at all is known of the number
    assert validated.json()["next"] == NEXT["complete"]
    assert completed.status == 200
    assert completed.json() == {
        "success": False,
        "next": NEXT["done"],
        "evaluation": {
            "identification": {"result": "fail", "failureReasons": {"9003": "Identity not found"}},
            "authentication": {
                "result": "fail",
                "failureReasons": {
                    "9175": "No active identity associated with the number",
                    "9177": "No information for identity or number",
                },
            },
            "compliance": {"result": "pass"},
            "risk": {"result": "pass"},
        },
    }
    assert call(integrator, "complete", correlation_id).status == 403


def test_production_still_refuses_numbers_of_the_other_region(make_api: Callable[..., Api]) -> None:
    # Given the US production stack
    _, integrator = production(make_api)

    # When an integrator starts with an EU number
    started = integrator.start(phoneNumber="+353855550131")

    # Then it is 403 with 8010
    assert started.status == 403
    assert error_of(started) == {"code": 8010}
