"""The staged flow on production tiers: no test users, identities from the identity table."""

from __future__ import annotations

import pytest

from phoneid.api.staged_models import ChallengeRequest, CompleteRequest, Individual, StartRequest
from phoneid.domain.errors import MalformedRequest, UnauthorizedForCountry
from phoneid.domain.identity import Identity
from phoneid.domain.session import Possession
from tests.unit.helpers import API_BASE, StagedWorld, caller, identity, staged_world

CUSTOMER = "+12025550142"


def started(world: StagedWorld, phone: str | None, flow_type: str = "mobile") -> str:
    request = StartRequest.model_validate(
        {"flowType": flow_type, "phoneNumber": phone, "finalTargetUrl": "https://example.com/done"}
    )
    return world.flow.start(caller(), request, API_BASE).correlationId


def possessed_and_validated(world: StagedWorld, phone: str) -> str:
    """Start, let the customer's device pass possession, validate; returns the correlationId."""
    correlation_id = started(world, phone)
    world.pass_possession(caller(), correlation_id)
    assert world.flow.validate(caller(), correlation_id).success is True
    return correlation_id


def test_us_mobile_flow_may_start_without_a_number() -> None:
    # Given the US production stack
    world = staged_world("production", "US")

    # When a mobile flow starts without a number (Mobile Auth identifies it)
    correlation_id = started(world, None)

    # Then a session exists with no number and pending possession
    session = world.stored(caller(), correlation_id)
    assert session.phone_number is None
    assert session.possession.status == Possession.PENDING
    assert session.sandbox_scenario is None


@pytest.mark.parametrize(("region", "flow_type"), [("EU", "mobile"), ("US", "desktop"), ("EU", "desktop")])
def test_other_flows_without_a_number_are_malformed_naming_phone_number(region: str, flow_type: str) -> None:
    # Given a production stack where the number is required
    world = staged_world("production", region)  # type: ignore[arg-type]

    # When a flow starts without a number
    with pytest.raises(MalformedRequest) as raised:
        started(world, None, flow_type)

    # Then it is 8001 naming phoneNumber
    assert (raised.value.code, raised.value.http_status) == (8001, 400)
    assert raised.value.parameters == ["phoneNumber"]
    assert "phoneNumber" in raised.value.message


def test_a_sandbox_test_number_is_an_ordinary_number_in_production() -> None:
    # Given the US production stack
    world = staged_world("production", "US")

    # When the token-only test number is started and validated
    correlation_id = started(world, "+12025550111")
    response = world.flow.validate(caller(), correlation_id)

    # Then no scenario applies: possession did not pass without a device
    assert response.success is False
    assert response.next == {"done": "done"}


def test_a_us_number_on_the_eu_stack_is_8010() -> None:
    # Given the EU production stack
    world = staged_world("production", "EU")

    # When a US number is started
    with pytest.raises(UnauthorizedForCountry) as raised:
        started(world, CUSTOMER)

    # Then it is 8010
    assert raised.value.code == 8010


def test_an_eu_number_on_the_eu_stack_starts() -> None:
    # Given the EU production stack
    world = staged_world("production", "EU")

    # When an Irish number is started
    correlation_id = started(world, "+353851234567")

    # Then its session holds the number in E.164 form
    assert world.stored(caller(), correlation_id).phone_number == "+353851234567"


def test_challenge_returns_only_the_last_four_of_the_ssn_in_production() -> None:
    # Given a customer in the identity table who passed possession
    customer: Identity = identity(CUSTOMER)
    world = staged_world("production", "US", [customer])
    correlation_id = possessed_and_validated(world, CUSTOMER)

    # When challenged with the date of birth
    response = world.flow.challenge(
        caller(), ChallengeRequest(correlationId=correlation_id, dob="1987-06-15")
    )

    # Then it passes and the individual carries only the SSN's last four
    assert response.success is True
    assert response.individual is not None
    assert response.individual.ssn == "6789"
    assert response.model_dump()["individual"] == {
        "firstName": "Noor",
        "lastName": "Haddad",
        "addresses": [{"address": "42 Quarry Road", "city": "Albany", "region": "NY", "postalCode": "12207"}],
        "ssn": "6789",
        "dob": "1987-06-15",
        "emailAddresses": ["noor.haddad@example.com"],
    }


def test_challenge_for_a_number_without_identity_fails() -> None:
    # Given a number that passed possession but is not in the identity table
    world = staged_world("production", "US", [identity(CUSTOMER)])
    correlation_id = possessed_and_validated(world, "+12025550143")

    # When challenged
    response = world.flow.challenge(
        caller(), ChallengeRequest(correlationId=correlation_id, dob="1987-06-15")
    )

    # Then it fails and the flow is done
    assert response.success is False
    assert response.next == {"done": "done"}


def test_complete_for_a_number_without_identity_reports_9003() -> None:
    # Given a number not in the identity table, started with a dob, that passed possession
    world = staged_world("production", "US", [identity(CUSTOMER)])
    request = StartRequest(flowType="mobile", phoneNumber="+12025550143", dob="1987-06-15")
    correlation_id = world.flow.start(caller(), request, API_BASE).correlationId
    world.pass_possession(caller(), correlation_id)
    assert world.flow.validate(caller(), correlation_id).next == {"v3-complete": "/v3/complete"}

    # When completed
    response = world.flow.complete(
        caller(), CompleteRequest(correlationId=correlation_id, individual=Individual(firstName="Noor"))
    )

    # Then identification fails with 9003 (identity not found)
    assert response.success is False
    assert response.evaluation is not None
    assert response.evaluation["identification"].failureReasons == {"9003": "Identity not found"}


def test_complete_with_a_mismatched_ssn_reports_9001_and_9012() -> None:
    # Given a customer who passed possession and the challenge
    world = staged_world("production", "US", [identity(CUSTOMER)])
    correlation_id = possessed_and_validated(world, CUSTOMER)
    world.flow.challenge(caller(), ChallengeRequest(correlationId=correlation_id, dob="1987-06-15"))

    # When completed with the right name and another SSN
    request = CompleteRequest(
        correlationId=correlation_id,
        individual=Individual(firstName="Noor", lastName="Haddad", ssn="123-45-6780"),
    )
    response = world.flow.complete(caller(), request)

    # Then identification fails with 9001 and 9012; authentication, compliance and risk pass
    assert response.success is False
    assert response.model_dump()["evaluation"] == {
        "identification": {
            "result": "fail",
            "failureReasons": {"9001": "Identity not confirmed with 4 elements", "9012": "SSN mismatch"},
        },
        "authentication": {"result": "pass"},
        "compliance": {"result": "pass"},
        "risk": {"result": "pass"},
    }


def test_complete_with_all_elements_matching_passes() -> None:
    # Given a customer who passed possession and the challenge
    world = staged_world("production", "US", [identity(CUSTOMER)])
    correlation_id = possessed_and_validated(world, CUSTOMER)
    world.flow.challenge(caller(), ChallengeRequest(correlationId=correlation_id, ssn="6789"))

    # When completed with name, full SSN, dob and address
    request = CompleteRequest.model_validate(
        {
            "correlationId": correlation_id,
            "individual": {
                "firstName": "Noor",
                "lastName": "Haddad",
                "ssn": "123456789",
                "dob": "1987-06-15",
                "addresses": [{"address": "42 Quarry Road", "postalCode": "12207"}],
            },
        }
    )
    response = world.flow.complete(caller(), request)

    # Then every category passes
    assert response.success is True
    assert response.model_dump()["evaluation"] == {
        "identification": {"result": "pass"},
        "authentication": {"result": "pass"},
        "compliance": {"result": "pass"},
        "risk": {"result": "pass"},
    }


def test_the_individual_challenge_returned_is_accepted_by_complete() -> None:
    # Given a customer who passed possession and the challenge, which returned the SSN's last four
    world = staged_world("production", "US", [identity(CUSTOMER)])
    correlation_id = possessed_and_validated(world, CUSTOMER)
    challenged = world.flow.challenge(
        caller(), ChallengeRequest(correlationId=correlation_id, dob="1987-06-15")
    )
    assert challenged.individual is not None

    # When the integrator sends that individual, as it came, to complete
    request = CompleteRequest.model_validate(
        {"correlationId": correlation_id, "individual": challenged.model_dump()["individual"]}
    )
    response = world.flow.complete(caller(), request)

    # Then it is accepted and every category passes
    assert response.success is True
    assert {category["result"] for category in response.model_dump()["evaluation"].values()} == {"pass"}


def test_last_four_at_complete_that_do_not_match_report_9012() -> None:
    world = staged_world("production", "US", [identity(CUSTOMER)])
    correlation_id = possessed_and_validated(world, CUSTOMER)
    world.flow.challenge(caller(), ChallengeRequest(correlationId=correlation_id, dob="1987-06-15"))

    request = CompleteRequest(
        correlationId=correlation_id, individual=Individual(firstName="Noor", lastName="Haddad", ssn="6780")
    )
    response = world.flow.complete(caller(), request)

    assert response.success is False
    assert "9012" in response.model_dump()["evaluation"]["identification"]["failureReasons"]
