"""The staged flow in Sandbox: what validate, challenge and complete answer for the scripted test users,
and which numbers, solutions, countries and regions a client may use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from phoneid.domain.clients import Solution
from tests.harness import Api, Integrator
from tests.integration.test_staged_flow_rules import (
    COMPLETED,
    KIRA,
    KIRA_NAME,
    NEXT,
    begin,
    call,
    error_of,
    out_of_turn,
    session_at,
    stored,
)
from tests.sandbox_numbers import (
    EU_TOKEN_ONLY,
    FALLBACK,
    HARD_FAIL_INTL,
    HARD_FAIL_NA,
    MOBILE_AUTH_FAIL,
    MOBILE_AUTH_PASS,
    NOT_A_TEST_USER,
    OTP_FAIL,
    OTP_PASS,
    REPUTATION_FAIL,
    REVOKED_KEY,
    TOKEN_ONLY,
    VERIFIED_USER_FAIL,
)

KIRA_ADDRESS = KIRA["addresses"][0]

# The API's descriptions of the identification reason codes (compared without case).
DOCUMENTED_REASONS = {
    "9001": "identity not confirmed with 4 elements",
    "9003": "identity not found",
    "9012": "SSN mismatch",
    "9013": "birth date mismatch",
    "9014": "name mismatch",
    "9015": "address mismatch",
}


def failed_identification(*codes: str) -> dict[str, Any]:
    """A complete body whose identification failed with ``codes`` (possession passed)."""
    return {
        "success": False,
        "next": NEXT["done"],
        "evaluation": {
            "identification": {
                "result": "fail",
                "failureReasons": {code: DOCUMENTED_REASONS[code] for code in codes},
            },
            "authentication": {"result": "pass"},
            "compliance": {"result": "pass"},
            "risk": {"result": "pass"},
        },
    }


def casefolded(body: dict[str, Any]) -> dict[str, Any]:
    """The body with the reason descriptions case-folded, so the API's wording compares without case."""
    evaluation = body.get("evaluation", {})
    identification = evaluation.get("identification", {})
    reasons = identification.get("failureReasons")
    if reasons is None:
        return body
    folded = {code: text.casefold() for code, text in reasons.items()}
    return {
        **body,
        "evaluation": {**evaluation, "identification": {**identification, "failureReasons": folded}},
    }


def session_items(api: Api, client_id: str) -> list[dict[str, Any]]:
    return [
        item for item in api.table_items("SessionsTable") if item.get("clientId", {}).get("S") == client_id
    ]


# --- validate ----------------------------------------------------------------------------------


@pytest.mark.parametrize("phone", [TOKEN_ONLY, "(202) 555-0111", "202-555-0111", "+1 202 555 0111"])
def test_token_only_user_passes_validate_with_the_number_in_e164(api: Api, phone: str) -> None:
    # Given a flow of the token-only user, its number written in any accepted form, no challenge data
    integrator = api.integrator()
    correlation_id = begin(integrator, phone)

    # When the integrator validates
    validated = call(integrator, "validate", correlation_id)

    # Then possession passed, the challenge is missing, and the number comes back in E.164
    assert validated.status == 200
    assert validated.json() == {
        "success": True,
        "challengeMissing": True,
        "phoneNumber": TOKEN_ONLY,
        "next": NEXT["challenge"],
    }
    assert stored(api, integrator.client_id, correlation_id)["phoneNumber"] == TOKEN_ONLY  # type: ignore[index]


@pytest.mark.parametrize(
    "challenge",
    [{"dob": "1999-08-08"}, {"dob": "1999-08"}, {"dob": "08-08"}, {"ssn": "6711"}, {"ssn": "911456711"}],
)
def test_token_only_user_with_challenge_data_at_start_has_no_challenge_missing(
    api: Api, challenge: dict[str, str]
) -> None:
    # Given a flow of the token-only user whose start carried an SSN or a date of birth
    integrator = api.integrator()
    correlation_id = begin(integrator, **challenge)

    # When the integrator validates
    validated = call(integrator, "validate", correlation_id)

    # Then the challenge is not missing and complete comes next
    assert validated.json() == {
        "success": True,
        "challengeMissing": False,
        "phoneNumber": TOKEN_ONLY,
        "next": NEXT["complete"],
    }


@pytest.mark.parametrize(
    "phone",
    [
        OTP_PASS,
        OTP_FAIL,
        MOBILE_AUTH_PASS,
        MOBILE_AUTH_FAIL,
        FALLBACK,
        REPUTATION_FAIL,
        REVOKED_KEY,
        HARD_FAIL_NA,
        HARD_FAIL_INTL,
    ],
)
def test_other_test_users_fail_validate_until_the_client_runs_possession(api: Api, phone: str) -> None:
    # Given a flow of a test user whose possession is run by the client SDK, which never ran
    integrator = api.integrator()
    correlation_id = begin(integrator, phone)

    # When the integrator validates right away
    validated = call(integrator, "validate", correlation_id)

    # Then validation did not succeed: no phoneNumber, and the flow is done
    assert validated.status == 200
    assert validated.json() == {"success": False, "challengeMissing": True, "next": NEXT["done"]}
    item = stored(api, integrator.client_id, correlation_id)
    assert item is not None
    assert item["possession"]["status"] == "pending"
    assert item["nextStep"] == "done"


# --- challenge ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "challenge",
    [
        {"dob": "1999-08-08"},
        {"dob": "1999-08"},
        {"dob": "08-08"},
        {"ssn": "6711"},
        {"ssn": "911456711"},
        {"ssn": "911-45-6711"},
        {"ssn": "6711", "dob": "1999-08-08"},
    ],
)
def test_a_right_challenge_returns_the_individual_with_full_dob_and_ssn(
    api: Api, challenge: dict[str, str]
) -> None:
    # Given a validated flow of the token-only user that misses the challenge
    integrator = api.integrator()
    correlation_id = session_at(integrator, "challenge")

    # When the challenge carries the right date of birth (in any form) or SSN (four or nine digits)
    challenged = integrator.post("/v3/challenge", {"correlationId": correlation_id, **challenge})

    # Then it succeeds with the whole individual: dob as YYYY-MM-DD, the full SSN (Sandbox)
    assert challenged.status == 200
    assert challenged.json() == {"success": True, "individual": KIRA, "next": NEXT["complete"]}
    assert challenged.json()["individual"]["dob"] == "1999-08-08"


@pytest.mark.parametrize(
    "challenge",
    [
        {"dob": "1999-08-09"},
        {"dob": "1998-08"},
        {"dob": "01-01"},
        {"ssn": "0001"},  # a wrong last four (0000 is never issued: 400)
        {"ssn": "123456789"},
        {"ssn": "6711", "dob": "2000-01-01"},
    ],
)
def test_a_wrong_challenge_returns_no_individual_and_ends_the_flow(
    api: Api, challenge: dict[str, str]
) -> None:
    # Given a validated flow of the token-only user that misses the challenge
    integrator = api.integrator()
    correlation_id = session_at(integrator, "challenge")

    # When the challenge data does not match the user
    challenged = integrator.post("/v3/challenge", {"correlationId": correlation_id, **challenge})
    completed = call(integrator, "complete", correlation_id)

    # Then it answers 200 with success false, no individual, next done; complete is then a replay
    assert challenged.status == 200
    assert challenged.json() == {"success": False, "next": NEXT["done"]}
    assert completed.status == 403
    assert error_of(completed) == out_of_turn(correlation_id, "done")


# --- complete ----------------------------------------------------------------------------------


def test_complete_with_the_matching_individual_passes(api: Api) -> None:
    # Given a flow that passed the challenge
    integrator = api.integrator()
    correlation_id = session_at(integrator, "complete")

    # When complete carries every element of the individual, as returned by the challenge
    completed = call(integrator, "complete", correlation_id, individual=KIRA)

    # Then authentication and identification pass, and the flow is done
    assert completed.status == 200
    assert completed.json() == {
        "success": True,
        "next": {"done": "done"},
        "evaluation": {
            "identification": {"result": "pass"},
            "authentication": {"result": "pass"},
            "compliance": {"result": "pass"},
            "risk": {"result": "pass"},
        },
    }
    assert stored(api, integrator.client_id, correlation_id)["nextStep"] == "done"  # type: ignore[index]


def test_complete_works_without_an_ssn(api: Api) -> None:
    # Given a flow whose start carried only the date of birth (no SSN anywhere)
    integrator = api.integrator()
    correlation_id = begin(integrator, dob="1999-08-08")
    call(integrator, "validate", correlation_id)

    # When complete carries name, address and date of birth but no SSN
    individual = {**KIRA_NAME, "addresses": [KIRA_ADDRESS], "dob": "1999-08-08"}
    completed = call(integrator, "complete", correlation_id, individual=individual)

    # Then it passes
    assert completed.status == 200
    assert completed.json() == COMPLETED


@pytest.mark.parametrize(
    ("change", "codes"),
    [
        ({"ssn": "123456789"}, ("9001", "9012")),
        ({"ssn": "123-45-6789"}, ("9001", "9012")),
        ({"firstName": "Kara"}, ("9001", "9014")),
        ({"lastName": "Petrov"}, ("9001", "9014")),
        (
            {
                "addresses": [
                    {"address": "12 Spruce Loop", "city": "Helena", "region": "MT", "postalCode": "59601"}
                ]
            },
            ("9001", "9015"),
        ),
        ({"dob": "1999-08-09"}, ("9001", "9013")),
    ],
)
def test_complete_with_a_mismatched_element_fails_identification(
    api: Api, change: dict[str, Any], codes: tuple[str, ...]
) -> None:
    # Given a flow that passed the challenge
    integrator = api.integrator()
    correlation_id = session_at(integrator, "complete")

    # When complete carries the individual with one element wrong
    completed = call(integrator, "complete", correlation_id, individual={**KIRA, **change})

    # Then it answers 200 with success false, and identification fails naming the mismatch
    assert completed.status == 200
    assert casefolded(completed.json()) == casefolded(failed_identification(*codes))
    # And the flow is over
    assert stored(api, integrator.client_id, correlation_id)["nextStep"] == "done"  # type: ignore[index]
    assert call(integrator, "complete", correlation_id).status == 403


# --- which numbers a client may use -----------------------------------------------------------------


@pytest.mark.parametrize("phone", [NOT_A_TEST_USER, None])
def test_a_number_that_is_no_test_user_is_400_8007(api: Api, phone: str | None) -> None:
    # Given an integrator of the identity solution
    integrator = api.integrator()

    # When it starts with a number of no test user, or with no number at all
    started = integrator.start(phoneNumber=phone) if phone else integrator.start()

    # Then it is 400 with 8007 and no session is created
    assert started.status == 400
    assert error_of(started) == {"code": 8007}
    assert session_items(api, integrator.client_id) == []


def test_a_test_user_of_another_solution_is_403_8009(api: Api) -> None:
    # Given an integrator of the identity solution and one of the verified-user solution
    identity = api.integrator()
    verified_user = api.integrator(solution=Solution.VERIFIED_USER)

    # When each starts with the verified-user failure test user, and with the token-only user
    refused = identity.start(phoneNumber=VERIFIED_USER_FAIL)
    accepted = verified_user.start(phoneNumber=VERIFIED_USER_FAIL)
    other_way = verified_user.start(phoneNumber=TOKEN_ONLY)

    # Then only credentials of the user's own solution get a session
    assert refused.status == 403
    assert error_of(refused) == {"code": 8009}
    assert accepted.status == 200
    assert accepted.json()["next"] == NEXT["validate"]
    assert call(verified_user, "validate", accepted.json()["correlationId"]).status == 200
    assert other_way.status == 403
    assert error_of(other_way) == {"code": 8009}
    assert session_items(api, identity.client_id) == []


@pytest.mark.parametrize("phone", [EU_TOKEN_ONLY, "+447400123456", "+33612345678", "+4915123456789"])
def test_a_european_number_on_the_us_stack_is_403_8010(api: Api, phone: str) -> None:
    # Given an integrator on the US stack
    integrator = api.integrator()

    # When it starts with a number the EU stack serves (a test user there or not)
    started = integrator.start(phoneNumber=phone)

    # Then it is 403 with 8010
    assert started.status == 403
    assert error_of(started) == {"code": 8010}
    assert session_items(api, integrator.client_id) == []


@pytest.mark.parametrize(
    ("countries", "phone", "status"),
    [
        (["CA"], TOKEN_ONLY, 403),
        (["US"], HARD_FAIL_INTL, 403),
        (["US"], TOKEN_ONLY, 200),
        (["US", "AU"], HARD_FAIL_INTL, 200),
    ],
)
def test_a_client_may_only_use_its_countries(api: Api, countries: list[str], phone: str, status: int) -> None:
    # Given a client allowed some countries only
    integrator = api.integrator(countries=countries)

    # When it starts with a test user's number
    started = integrator.start(phoneNumber=phone)

    # Then numbers of other countries are 403 with 8010
    assert started.status == status
    if status == 403:
        assert error_of(started) == {"code": 8010}


def test_on_the_eu_stack_the_eu_token_only_user_walks_the_flow(make_api: Callable[..., Api]) -> None:
    # Given the EU Sandbox stack and an integrator there
    api = make_api(region="EU")
    integrator: Integrator = api.integrator()

    # When it runs the flow for the EU token-only user
    correlation_id = begin(integrator, EU_TOKEN_ONLY)
    validated = call(integrator, "validate", correlation_id)
    challenged = call(integrator, "challenge", correlation_id, dob="08-08")
    completed = call(
        integrator, "complete", correlation_id, individual={"firstName": "Kira", "lastName": "Petrova-Byrne"}
    )

    # Then every step passes with the EU user's data
    assert validated.json() == {
        "success": True,
        "challengeMissing": True,
        "phoneNumber": EU_TOKEN_ONLY,
        "next": NEXT["challenge"],
    }
    assert challenged.json() == {
        "success": True,
        "individual": {
            "firstName": "Kira",
            "lastName": "Petrova-Byrne",
            "addresses": [
                {"address": "11 Spruce Loop", "city": "Dublin", "region": "D", "postalCode": "D02 X031"}
            ],
            "ssn": "931456731",
            "dob": "1999-08-08",
            "emailAddresses": ["kira.petrova@example.com"],
        },
        "next": NEXT["complete"],
    }
    assert completed.json() == COMPLETED


@pytest.mark.parametrize("phone", [TOKEN_ONLY, OTP_PASS, NOT_A_TEST_USER])
def test_on_the_eu_stack_us_numbers_are_403_8010(make_api: Callable[..., Api], phone: str) -> None:
    # Given the EU Sandbox stack and an integrator there
    api = make_api(region="EU")
    integrator = api.integrator()

    # When it starts with a US number
    started = integrator.start(phoneNumber=phone)

    # Then it is 403 with 8010
    assert started.status == 403
    assert error_of(started) == {"code": 8010}
