"""The error mapper: the API's error body, parameter names from validation, and opaque 8000s."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import ValidationError

from phoneid.api.errors import error_body, from_validation, proxy_response, request_fields
from phoneid.api.staged_models import CompleteRequest, StartRequest
from phoneid.domain.errors import (
    InternalError,
    InvalidCorrelationId,
    MalformedRequest,
    RateLimitExceeded,
    StepOutOfOrder,
)

CORRELATION_ID = "0b6f3c1e-2a4d-4e8f-9c7a-1d2e3f4a5b6c"


def validation_errors(model: Any, body: dict[str, Any] | str) -> list[Any]:
    """The validation errors of ``body`` (a JSON text is parsed as the API would)."""
    text = body if isinstance(body, str) else json.dumps(body)
    with pytest.raises(ValidationError) as raised:
        model.model_validate_json(text)
    return raised.value.errors()


def test_the_body_has_only_code_and_message_when_nothing_else_is_known() -> None:
    # Given an error with no correlationId or next, and a request without optional fields
    # When mapped
    body = error_body(InvalidCorrelationId(), {})

    # Then only code and message are present
    assert body == {"code": 8008, "message": InvalidCorrelationId.default_message}


def test_client_request_id_and_correlation_id_are_echoed_from_the_request() -> None:
    # Given a request naming its clientRequestId and a well-formed correlationId
    request = {"clientRequestId": "req-42", "correlationId": CORRELATION_ID}

    # When an error is mapped
    body = error_body(MalformedRequest(problems={"dob": "is invalid"}), request)

    # Then both are echoed
    assert body["clientRequestId"] == "req-42"
    assert body["correlationId"] == CORRELATION_ID
    assert body["code"] == 8001
    assert "next" not in body


@pytest.mark.parametrize(
    "correlation_id", ["not-a-uuid", CORRELATION_ID.upper(), CORRELATION_ID + "0", 42, None]
)
def test_a_malformed_correlation_id_is_not_echoed(correlation_id: Any) -> None:
    # Given a request whose correlationId is not of the documented pattern
    # When an error is mapped
    body = error_body(InvalidCorrelationId(), {"correlationId": correlation_id})

    # Then no correlationId is in the body
    assert "correlationId" not in body


def test_an_over_long_or_non_string_client_request_id_is_not_echoed() -> None:
    # Given requests with a clientRequestId of 129 characters, or a number
    # When errors are mapped
    long_id = error_body(InvalidCorrelationId(), {"clientRequestId": "r" * 129})
    number = error_body(InvalidCorrelationId(), {"clientRequestId": 7})

    # Then none is echoed
    assert "clientRequestId" not in long_id
    assert "clientRequestId" not in number


def test_an_out_of_order_error_carries_next_and_its_correlation_id() -> None:
    # Given an 8003 raised for a session
    error = StepOutOfOrder(next_step={"v3-validate": "/v3/validate"}, correlation_id=CORRELATION_ID)

    # When mapped for a request that sent no correlationId
    body = error_body(error, {})

    # Then the body carries next and the session's correlationId
    assert body == {
        "code": 8003,
        "message": StepOutOfOrder.default_message,
        "correlationId": CORRELATION_ID,
        "next": {"v3-validate": "/v3/validate"},
    }


def test_a_proxy_response_carries_status_headers_and_body() -> None:
    # Given a rate-limit error
    error = RateLimitExceeded(headers={"Retry-After": "1"})

    # When turned into an API Gateway proxy result
    result = proxy_response(error, {})

    # Then status, headers and JSON body follow the error
    assert result["statusCode"] == 429
    assert result["headers"] == {"Content-Type": "application/json", "Retry-After": "1"}
    assert json.loads(result["body"]) == {"code": 8018, "message": RateLimitExceeded.default_message}


@pytest.mark.parametrize("body", [None, "", "not json", "[1, 2]", '"text"'])
def test_request_fields_of_a_non_object_body_are_empty(body: str | None) -> None:
    # Given a body that is not a JSON object
    # When read for echoing
    # Then nothing is taken from it
    assert request_fields(body) == {}


def test_request_fields_of_an_object_body_are_its_fields() -> None:
    # Given a JSON object body
    # When read
    # Then its fields are returned
    assert request_fields('{"clientRequestId": "r1"}') == {"clientRequestId": "r1"}


def test_validation_errors_name_nested_parameters_without_their_values() -> None:
    # Given a complete body with a too-long city, a bad SSN and a bad dob
    secret_ssn, secret_city = "98765", "Q" * 129
    errors = validation_errors(
        CompleteRequest,
        {
            "correlationId": CORRELATION_ID,
            "individual": {"ssn": secret_ssn, "dob": "1977-02-31", "addresses": [{"city": secret_city}]},
        },
    )

    # When mapped
    error = from_validation(errors)

    # Then it is 8001 naming each parameter by its path, and no value appears
    assert (error.code, error.http_status) == (8001, 400)
    assert error.parameters == ["individual.addresses.0.city", "individual.dob", "individual.ssn"]
    for name in error.parameters:
        assert name in error.message
    for value in (secret_ssn, secret_city, "1977-02-31"):
        assert value not in error.message


def test_validation_errors_of_unknown_fields_and_types_name_them() -> None:
    # Given a start body with an unknown field and a string boolean
    errors = validation_errors(
        StartRequest, {"flowType": "mobile", "nickname": "Kimberly", "allowOTPRetry": "maybe-later"}
    )

    # When mapped
    error = from_validation(errors)

    # Then both are named, and neither value appears
    assert error.parameters == ["allowOTPRetry", "nickname"]
    assert "Kimberly" not in error.message
    assert "maybe-later" not in error.message


def test_invalid_json_is_reported_on_the_body() -> None:
    # Given a body that is not JSON
    errors = validation_errors(StartRequest, "{not json")

    # When mapped
    error = from_validation(errors)

    # Then the body is named as the invalid parameter
    assert error.parameters == ["body"]
    assert "body is not valid JSON" in error.message


def test_unexpected_errors_carry_a_reference_and_nothing_else() -> None:
    # Given an unexpected failure
    # When turned into an error twice
    first, second = InternalError.referenced(), InternalError.referenced()
    reference, other_reference = str(first.reference), str(second.reference)

    # Then each is an 8000 / 500 whose message is the fixed text with its own reference
    assert isinstance(first, InternalError)
    assert (first.code, first.http_status) == (8000, 500)
    assert re.fullmatch(r"[0-9a-f]{12}", reference)
    assert first.message == f"Internal error; retry the request (reference {reference})"
    assert reference != other_reference
    assert second.message.endswith(f"(reference {other_reference})")
    assert error_body(first, {}) == {"code": 8000, "message": first.message}
