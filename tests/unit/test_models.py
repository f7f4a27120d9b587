"""Request validation (the API's field rules) and response serialization (omit empty values)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from phoneid.api.staged_models import (
    ChallengeRequest,
    ChallengeResponse,
    CompleteRequest,
    IndividualOut,
    StartRequest,
    ValidateResponse,
)

URL_PREFIX = "https://example.com/"


def url_of_length(length: int) -> str:
    return URL_PREFIX + "a" * (length - len(URL_PREFIX))


def start(**fields: Any) -> StartRequest:
    return StartRequest.model_validate({"flowType": "mobile", **fields})


def invalid_fields(error: pytest.ExceptionInfo[ValidationError]) -> set[str]:
    return {".".join(str(part) for part in e["loc"]) for e in error.value.errors()}


def test_a_minimal_mobile_start_is_valid_with_defaults() -> None:
    # Given only a flow type
    # When validated
    request = start()

    # Then the optional fields take their defaults
    assert request.flowType == "mobile"
    assert request.allowOTPRetry is False
    assert request.finalTargetUrl is None


@pytest.mark.parametrize(
    ("fields", "invalid"),
    [
        ({"colour": "blue"}, "colour"),
        ({"allowOTPRetry": "true"}, "allowOTPRetry"),
        ({"allowOTPRetry": 1}, "allowOTPRetry"),
        ({"finalTargetUrl": url_of_length(2049)}, "finalTargetUrl"),
        ({"finalTargetUrl": ""}, "finalTargetUrl"),
        ({"finalTargetUrl": "javascript:alert(1)"}, "finalTargetUrl"),
        ({"flowType": "tablet"}, "flowType"),
        ({"flowType": "desktop"}, "finalTargetUrl"),
        ({"ssn": "12345"}, "ssn"),
        ({"ssn": "12-345-6789"}, "ssn"),
        ({"dob": "1999-02-30"}, "dob"),
        ({"dob": "13-01"}, "dob"),
        ({"dob": "2023-00"}, "dob"),
        ({"dob": "08/08/1999"}, "dob"),
        ({"phoneNumber": "+1" + "2" * 31}, "phoneNumber"),
    ],
    ids=[
        "unknown-field",
        "string-boolean",
        "integer-boolean",
        "url-2049",
        "url-empty",
        "url-not-http",
        "flow-type-tablet",
        "desktop-without-url",
        "ssn-five-digits",
        "ssn-misdashed",
        "dob-feb-30",
        "dob-month-13",
        "dob-month-00",
        "dob-slashes",
        "phone-too-long",
    ],
)
def test_start_request_rejects(fields: dict[str, Any], invalid: str) -> None:
    # Given a start body breaking one rule
    # When validated
    with pytest.raises(ValidationError) as raised:
        start(**fields)

    # Then the error names that field
    assert invalid in invalid_fields(raised)


@pytest.mark.parametrize(
    "fields",
    [
        {"finalTargetUrl": url_of_length(2048)},
        {"flowType": "desktop", "finalTargetUrl": "https://example.com/done"},
        {"ssn": "6789"},
        {"ssn": "123456789"},
        {"ssn": "123-45-6789"},
        {"dob": "1999-08-08"},
        {"dob": "1999-08"},
        {"dob": "02-29"},
        {"allowOTPRetry": True},
    ],
    ids=[
        "url-2048",
        "desktop-with-url",
        "ssn-last-four",
        "ssn-nine",
        "ssn-dashed",
        "dob-full",
        "dob-year-month",
        "dob-month-day",
        "retry-true",
    ],
)
def test_start_request_accepts(fields: dict[str, Any]) -> None:
    # Given a start body within the rules
    # When validated
    request = start(**fields)

    # Then every field is kept as sent
    for name, value in fields.items():
        assert getattr(request, name) == value


def test_challenge_request_requires_a_well_formed_correlation_id() -> None:
    # Given a correlationId in upper case (not the documented pattern)
    # When validated
    with pytest.raises(ValidationError) as raised:
        ChallengeRequest.model_validate({"correlationId": "0B6F3C1E-2A4D-4E8F-9C7A-1D2E3F4A5B6C"})

    # Then correlationId is named
    assert invalid_fields(raised) == {"correlationId"}


def test_complete_request_checks_nested_fields() -> None:
    # Given an individual with a bad dob and an address with an unknown field
    body = {
        "correlationId": "0b6f3c1e-2a4d-4e8f-9c7a-1d2e3f4a5b6c",
        "individual": {"dob": "1999-08", "addresses": [{"street": "1 Main St"}], "ssn": "67890"},
    }

    # When validated
    with pytest.raises(ValidationError) as raised:
        CompleteRequest.model_validate(body)

    # Then each nested field is named (complete wants a full dob, and a full SSN or its last four)
    assert invalid_fields(raised) == {"individual.dob", "individual.addresses.0.street", "individual.ssn"}


def test_responses_omit_none_empty_objects_and_empty_arrays() -> None:
    # Given a response with None, {} and [] values
    response = ChallengeResponse(
        success=True,
        individual=IndividualOut(firstName="Noor", addresses=[], emailAddresses=[], ssn=None),
        next={},
    )

    # When serialized
    body = response.model_dump()

    # Then only fields with a value remain
    assert body == {"success": True, "individual": {"firstName": "Noor"}}


def test_responses_keep_empty_strings_and_false() -> None:
    # Given a response with an empty string and False values
    response = ValidateResponse(success=False, challengeMissing=False, phoneNumber="", next={"done": "done"})

    # When serialized
    body = response.model_dump()

    # Then they are kept
    assert body == {"success": False, "challengeMissing": False, "phoneNumber": "", "next": {"done": "done"}}


def test_a_nested_object_left_empty_is_omitted() -> None:
    # Given an individual with no values at all
    response = ChallengeResponse(success=False, individual=IndividualOut(), next={"done": "done"})

    # When serialized
    # Then the empty individual is omitted
    assert response.model_dump() == {"success": False, "next": {"done": "done"}}
