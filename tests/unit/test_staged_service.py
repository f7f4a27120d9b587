"""The staged flow on the Sandbox tier (US): start, validate, challenge, complete with test users."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

import pytest

from phoneid.api.staged_models import ChallengeRequest, CompleteRequest, Individual, StartRequest
from phoneid.domain import tokens
from phoneid.domain.clients import Caller, Solution
from phoneid.domain.errors import (
    InvalidCorrelationId,
    MalformedRequest,
    PhoneIdError,
    SandboxAccessDenied,
    SandboxUserNotFound,
    StepAlreadyCompleted,
    StepOutOfOrder,
    UnauthorizedForCountry,
)
from phoneid.domain.flow import Step
from phoneid.domain.session import Challenge
from tests.unit.helpers import API_BASE, StagedWorld, caller, staged_world

TOKEN_ONLY = "+12025550111"  # Kira Petrova, 1999-08-08, SSN 911456711
OTP_PASS = "+12025550101"
VERIFIED_USER_FAIL = "+12025550110"
EU_OTP_PASS = "+353855550121"

CHALLENGE = {"v3-challenge": "/v3/challenge"}
COMPLETE = {"v3-complete": "/v3/complete"}
DONE = {"done": "done"}


@pytest.fixture
def world() -> StagedWorld:
    return staged_world("sandbox", "US")


def start(world: StagedWorld, who: Caller, phone: str | None = TOKEN_ONLY, **fields: Any) -> str:
    """Start a mobile flow and return its correlationId."""
    request = StartRequest.model_validate({"flowType": "mobile", "phoneNumber": phone, **fields})
    return world.flow.start(who, request, API_BASE).correlationId


def challenge(world: StagedWorld, who: Caller, correlation_id: str, **fields: str) -> Any:
    return world.flow.challenge(who, ChallengeRequest(correlationId=correlation_id, **fields))


def complete(world: StagedWorld, who: Caller, correlation_id: str, **individual: Any) -> Any:
    request = CompleteRequest(correlationId=correlation_id, individual=Individual.model_validate(individual))
    return world.flow.complete(who, request)


def assert_error(raised: pytest.ExceptionInfo[PhoneIdError], code: int, status: int) -> None:
    assert (raised.value.code, raised.value.http_status) == (code, status)


# --- start ---------------------------------------------------------------------------------------


def test_start_returns_a_correlation_id_and_names_validate(world: StagedWorld) -> None:
    # Given an identity-solution caller
    who = caller()

    # When it starts a flow for the token-only user
    response = world.flow.start(who, StartRequest(flowType="mobile", phoneNumber=TOKEN_ONLY), API_BASE)

    # Then the response names validate and a session is stored for the caller
    assert response.next == {"v3-validate": "/v3/validate"}
    session = world.stored(who, response.correlationId)
    assert session.next_step == Step.VALIDATE
    assert session.phone_number == TOKEN_ONLY
    assert session.sandbox_scenario == "token-only"


def test_the_auth_token_is_a_client_token_for_the_session(world: StagedWorld) -> None:
    # Given a flow started now
    who = caller()
    started_at = world.clock.now()
    response = world.flow.start(who, StartRequest(flowType="mobile", phoneNumber=TOKEN_ONLY), API_BASE)

    # When its authToken is verified as a client-SDK token
    verified = tokens.verify(
        response.authToken,
        key_for=world.signer.verification_key,
        issuer=world.audience.issuer,
        audience=world.audience.client_sdk,
        token_use="client",
        now=world.clock.now(),
    )

    # Then it names the session and lives 15 minutes from start
    assert verified["sub"] == response.correlationId
    assert verified["exp"] == int(started_at.timestamp()) + 15 * 60
    assert verified["cid"] == who.client_id


def test_the_auth_token_is_not_an_access_token(world: StagedWorld) -> None:
    # Given a flow's authToken
    response = world.flow.start(caller(), StartRequest(flowType="mobile", phoneNumber=TOKEN_ONLY), API_BASE)

    # When verified as an API access token
    # Then it is refused
    with pytest.raises(PhoneIdError) as raised:
        tokens.verify(
            response.authToken,
            key_for=world.signer.verification_key,
            issuer=world.audience.issuer,
            audience=world.audience.api,
            token_use="access",
            now=world.clock.now(),
        )
    assert_error(raised, 8002, 401)


@pytest.mark.parametrize(
    "phone", ["+12025550199", None, "", "   "], ids=["unknown", "none", "empty", "blank"]
)
def test_start_without_a_test_users_number_is_8007(world: StagedWorld, phone: str | None) -> None:
    # Given a Sandbox stack
    # When start is called with a number of no test user, or none
    with pytest.raises(SandboxUserNotFound) as raised:
        start(world, caller(), phone)

    # Then it is 8007 and no session is stored
    assert raised.value.code == 8007
    assert world.sessions.items == {}


def test_a_test_user_of_another_solution_is_8009(world: StagedWorld) -> None:
    # Given the verified-user test user and an identity-solution caller
    # When the caller starts a flow for that user
    with pytest.raises(SandboxAccessDenied) as raised:
        start(world, caller(solution=Solution.IDENTITY), VERIFIED_USER_FAIL)

    # Then it is 8009 / 403
    assert_error(raised, 8009, 403)


def test_an_eu_number_on_the_us_stack_is_8010(world: StagedWorld) -> None:
    # Given the US Sandbox stack
    # When a flow is started for an EU test user's number
    with pytest.raises(UnauthorizedForCountry) as raised:
        start(world, caller(), EU_OTP_PASS)

    # Then it is 8010 / 403
    assert_error(raised, 8010, 403)


def test_a_country_the_caller_may_not_serve_is_8010(world: StagedWorld) -> None:
    # Given a caller allowed Canada only
    who = caller(countries={"CA"})

    # When it starts a flow for a US number
    with pytest.raises(UnauthorizedForCountry) as raised:
        start(world, who, TOKEN_ONLY)

    # Then it is 8010 / 403
    assert_error(raised, 8010, 403)


def test_an_invalid_number_is_malformed_naming_phone_number_only(world: StagedWorld) -> None:
    # Given the Sandbox stack
    # When start is called with a number too short to exist
    with pytest.raises(MalformedRequest) as raised:
        start(world, caller(), "+1202555011")

    # Then it is 8001 naming phoneNumber, without the digits sent
    assert_error(raised, 8001, 400)
    assert raised.value.parameters == ["phoneNumber"]
    assert "202555011" not in raised.value.message


def test_start_stores_ssn_and_dob_only_in_the_challenge(world: StagedWorld) -> None:
    # Given a flow started with a dashed SSN and a date of birth
    who = caller()
    correlation_id = start(world, who, ssn="911-45-6711", dob="1999-08-08")

    # When the stored session is read
    session = world.stored(who, correlation_id)

    # Then the challenge holds the SSN digits and the date, and no other field holds either
    assert session.challenge == Challenge(ssn="911456711", dob="1999-08-08")
    for field in fields(session):
        if field.name != "challenge":
            text = repr(getattr(session, field.name))
            assert "911456711" not in text
            assert "1999-08-08" not in text


# --- validate ------------------------------------------------------------------------------------


def test_token_only_user_without_challenge_data_validates_and_needs_the_challenge(world: StagedWorld) -> None:
    # Given a flow for the token-only user, started without SSN or dob
    who = caller()
    correlation_id = start(world, who)

    # When validated
    response = world.flow.validate(who, correlation_id)

    # Then possession passed, the challenge is missing, and challenge comes next
    assert response.model_dump() == {
        "success": True,
        "challengeMissing": True,
        "phoneNumber": TOKEN_ONLY,
        "next": CHALLENGE,
    }


def test_token_only_user_with_dob_at_start_goes_straight_to_complete(world: StagedWorld) -> None:
    # Given a flow for the token-only user started with a date of birth
    who = caller()
    correlation_id = start(world, who, dob="1999-08-08")

    # When validated
    response = world.flow.validate(who, correlation_id)

    # Then nothing is missing and complete comes next
    assert response.success is True
    assert response.challengeMissing is False
    assert response.next == COMPLETE


def test_a_user_whose_possession_has_not_passed_fails_validation_and_the_flow_ends(
    world: StagedWorld,
) -> None:
    # Given a flow for the OTP user, whose device never entered the code
    who = caller()
    correlation_id = start(world, who, OTP_PASS)

    # When validated
    response = world.flow.validate(who, correlation_id)

    # Then it fails, without the number, and the flow is done
    assert response.success is False
    assert response.phoneNumber is None
    assert response.next == DONE
    assert "phoneNumber" not in response.model_dump()


AFTER_VALIDATE: dict[str, Callable[[StagedWorld, Caller, str], Any]] = {
    "challenge": lambda world, who, cid: challenge(world, who, cid, dob="1984-03-14"),
    "complete": lambda world, who, cid: complete(world, who, cid, firstName="Ava", lastName="Sandoval"),
}


@pytest.mark.parametrize("step", sorted(AFTER_VALIDATE))
def test_steps_after_a_failed_validation_are_refused_with_403(world: StagedWorld, step: str) -> None:
    # Given a flow whose validation failed
    who = caller()
    correlation_id = start(world, who, OTP_PASS)
    world.flow.validate(who, correlation_id)

    # When challenge or complete is called
    with pytest.raises(StepAlreadyCompleted) as raised:
        AFTER_VALIDATE[step](world, who, correlation_id)

    # Then it is 8003 / 403 naming done
    assert_error(raised, 8003, 403)
    assert raised.value.next_step == DONE


def test_validate_twice_is_refused_with_403(world: StagedWorld) -> None:
    # Given a validated flow
    who = caller()
    correlation_id = start(world, who)
    world.flow.validate(who, correlation_id)

    # When validated again
    with pytest.raises(StepAlreadyCompleted) as raised:
        world.flow.validate(who, correlation_id)

    # Then it is 403 naming challenge
    assert_error(raised, 8003, 403)
    assert raised.value.next_step == CHALLENGE


def test_challenge_before_validate_is_refused_with_400(world: StagedWorld) -> None:
    # Given a started flow
    who = caller()
    correlation_id = start(world, who)

    # When challenge is called before validate
    with pytest.raises(StepOutOfOrder) as raised:
        challenge(world, who, correlation_id, dob="1999-08-08")

    # Then it is 400 naming validate, and validate still works
    assert_error(raised, 8003, 400)
    assert raised.value.next_step == {"v3-validate": "/v3/validate"}
    assert world.flow.validate(who, correlation_id).success is True


# --- expiry and ownership ------------------------------------------------------------------------


def test_a_session_lives_until_just_before_15_minutes(world: StagedWorld) -> None:
    # Given a flow started 14 min 59 s ago
    who = caller()
    correlation_id = start(world, who)
    world.clock.advance(minutes=14, seconds=59)

    # When validated
    response = world.flow.validate(who, correlation_id)

    # Then it works
    assert response.success is True


def test_a_session_expires_15_minutes_after_start(world: StagedWorld) -> None:
    # Given a flow started 15 minutes ago
    who = caller()
    correlation_id = start(world, who)
    world.clock.advance(minutes=15)

    # When validated
    with pytest.raises(InvalidCorrelationId) as raised:
        world.flow.validate(who, correlation_id)

    # Then it is 8008 / 403
    assert_error(raised, 8008, 403)


def test_another_clients_correlation_id_is_invalid(world: StagedWorld) -> None:
    # Given a flow of client A
    owner, other = caller("client-a"), caller("client-b")
    correlation_id = start(world, owner)

    # When client B validates it
    with pytest.raises(InvalidCorrelationId) as raised:
        world.flow.validate(other, correlation_id)

    # Then it is 8008 / 403 and the owner's flow is untouched
    assert_error(raised, 8008, 403)
    assert world.flow.validate(owner, correlation_id).success is True


def test_an_unknown_correlation_id_is_invalid(world: StagedWorld) -> None:
    # Given no flow
    # When a made-up correlationId is validated
    with pytest.raises(InvalidCorrelationId):
        world.flow.validate(caller(), "0b6f3c1e-2a4d-4e8f-9c7a-1d2e3f4a5b6c")


# --- challenge -----------------------------------------------------------------------------------


def validated(world: StagedWorld, who: Caller, **fields: Any) -> str:
    """A token-only flow, validated; returns its correlationId."""
    correlation_id = start(world, who, **fields)
    world.flow.validate(who, correlation_id)
    return correlation_id


def test_challenge_success_returns_the_full_ssn_and_dob_in_sandbox(world: StagedWorld) -> None:
    # Given a validated token-only flow
    who = caller()
    correlation_id = validated(world, who)

    # When challenged with the last four of the SSN
    response = challenge(world, who, correlation_id, ssn="6711")

    # Then it passes, complete comes next, and the individual carries the full SSN and dob
    assert response.success is True
    assert response.next == COMPLETE
    assert response.individual.ssn == "911456711"
    assert response.individual.dob == "1999-08-08"
    assert (response.individual.firstName, response.individual.lastName) == ("Kira", "Petrova")


@pytest.mark.parametrize("dob", ["1999-08-08", "1999-08", "08-08"])
def test_challenge_accepts_the_dob_in_each_form(world: StagedWorld, dob: str) -> None:
    # Given a validated token-only flow
    who = caller()
    correlation_id = validated(world, who)

    # When challenged with the date of birth in one of its forms
    response = challenge(world, who, correlation_id, dob=dob)

    # Then it passes and the response's dob is always YYYY-MM-DD
    assert response.success is True
    assert response.individual.dob == "1999-08-08"


def test_challenge_with_a_wrong_dob_fails_and_ends_the_flow(world: StagedWorld) -> None:
    # Given a validated token-only flow
    who = caller()
    correlation_id = validated(world, who)

    # When challenged with another date of birth
    response = challenge(world, who, correlation_id, dob="1999-08-09")

    # Then it fails with no individual, and the flow is done
    assert response.success is False
    assert response.individual is None
    assert response.next == DONE
    assert response.model_dump() == {"success": False, "next": DONE}
    with pytest.raises(StepAlreadyCompleted):
        complete(world, who, correlation_id, firstName="Kira", lastName="Petrova")


def test_challenge_without_ssn_or_dob_is_malformed_and_can_be_retried(world: StagedWorld) -> None:
    # Given a validated flow with no challenge data
    who = caller()
    correlation_id = validated(world, who)

    # When challenged with neither SSN nor dob
    with pytest.raises(MalformedRequest) as raised:
        challenge(world, who, correlation_id)

    # Then it is 8001 naming both, the step is not burnt, and a corrected retry succeeds
    assert_error(raised, 8001, 400)
    assert raised.value.parameters == ["dob", "ssn"]
    assert world.stored(who, correlation_id).next_step == Step.CHALLENGE
    assert challenge(world, who, correlation_id, dob="1999-08-08").success is True


def test_challenge_twice_is_refused_with_403(world: StagedWorld) -> None:
    # Given a flow whose challenge passed
    who = caller()
    correlation_id = validated(world, who)
    challenge(world, who, correlation_id, dob="1999-08-08")

    # When challenged again
    with pytest.raises(StepAlreadyCompleted) as raised:
        challenge(world, who, correlation_id, dob="1999-08-08")

    # Then it is 403 naming complete
    assert raised.value.next_step == COMPLETE


def test_challenge_data_is_stored_only_in_the_sessions_challenge(world: StagedWorld) -> None:
    # Given a validated flow
    who = caller()
    correlation_id = validated(world, who)

    # When challenged with a dashed full SSN
    challenge(world, who, correlation_id, ssn="911-45-6711")

    # Then the session's challenge holds the SSN digits
    assert world.stored(who, correlation_id).challenge == Challenge(ssn="911456711", dob=None)


# --- complete ------------------------------------------------------------------------------------


def test_complete_with_matching_data_passes_both_categories(world: StagedWorld) -> None:
    # Given a token-only flow started with its dob and validated
    who = caller()
    correlation_id = validated(world, who, dob="1999-08-08")

    # When completed with the user's name
    response = complete(world, who, correlation_id, firstName="Kira", lastName="Petrova")

    # Then it succeeds and the flow is done
    assert response.model_dump() == {
        "success": True,
        "next": DONE,
        "evaluation": {
            "identification": {"result": "pass"},
            "authentication": {"result": "pass"},
            "compliance": {"result": "pass"},
            "risk": {"result": "pass"},
        },
    }


def test_complete_with_a_mismatched_ssn_fails_identification(world: StagedWorld) -> None:
    # Given a validated and challenged token-only flow
    who = caller()
    correlation_id = validated(world, who, dob="1999-08-08")

    # When completed with the right name and a wrong SSN
    response = complete(world, who, correlation_id, firstName="Kira", lastName="Petrova", ssn="911456712")

    # Then it fails identification with 9001 and 9012
    assert response.success is False
    identification = response.evaluation["identification"]
    assert identification.result == "fail"
    assert set(identification.failureReasons) == {"9001", "9012"}
    assert response.evaluation["authentication"].result == "pass"
    assert response.next == DONE


def test_complete_twice_is_refused_with_403(world: StagedWorld) -> None:
    # Given a completed flow
    who = caller()
    correlation_id = validated(world, who, dob="1999-08-08")
    complete(world, who, correlation_id, firstName="Kira", lastName="Petrova")

    # When completed again
    with pytest.raises(StepAlreadyCompleted) as raised:
        complete(world, who, correlation_id, firstName="Kira", lastName="Petrova")

    # Then it is 403 naming done
    assert raised.value.next_step == DONE


def test_complete_uses_the_challenge_data_of_the_session(world: StagedWorld) -> None:
    # Given a flow challenged with the last four of the SSN
    who = caller()
    correlation_id = validated(world, who)
    challenge(world, who, correlation_id, ssn="6711")

    # When completed with the name only
    response = complete(world, who, correlation_id, firstName="kira", lastName="PETROVA")

    # Then the challenge's SSN counts as the second element: identification passes
    assert response.success is True
