"""The one error mapper: domain errors and validation failures to the API's error body."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from phoneid.api import jsonbody
from phoneid.api.models import CORRELATION_ID_PATTERN, ErrorBody
from phoneid.domain.errors import MalformedRequest, PhoneIdError

_CORRELATION_ID = re.compile(CORRELATION_ID_PATTERN)


def request_fields(body: str | None) -> Mapping[str, Any]:
    """The request body as a JSON object, or {} when it is not one (it may be the reason for the error).

    Never raises, whatever the body (too deep, not text): it is read while answering an error.
    """
    if not body or not isinstance(body, str):
        return {}
    return jsonbody.loose_object(body)


def error_body(error: PhoneIdError, request: Mapping[str, Any]) -> dict[str, Any]:
    """``{code, message, clientRequestId?, correlationId?, next?}``; optional fields only when known."""
    client_request_id = request.get("clientRequestId")
    correlation_id = error.correlation_id or request.get("correlationId")
    body = ErrorBody(
        code=error.code,
        message=error.message,
        clientRequestId=client_request_id
        if isinstance(client_request_id, str) and len(client_request_id) <= 128
        else None,
        correlationId=correlation_id
        if isinstance(correlation_id, str) and _CORRELATION_ID.match(correlation_id)
        else None,
        next=error.next_step,
    )
    return body.model_dump()


def to_json(body: Mapping[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"))


def proxy_response(error: PhoneIdError, request: Mapping[str, Any]) -> dict[str, Any]:
    """An API Gateway proxy result, for errors raised before the resolver runs."""
    return {
        "statusCode": error.http_status,
        "headers": {"Content-Type": "application/json", **error.headers},
        "body": to_json(error_body(error, request)),
        "isBase64Encoded": False,
    }


def _reason(error: Mapping[str, Any]) -> str:
    if error.get("type") == "json_invalid":
        return "body is not valid JSON"
    message = str(error.get("msg", "is invalid"))
    return message.removeprefix("Value error, ")


def from_validation(errors: Sequence[Mapping[str, Any]]) -> MalformedRequest:
    """Name each invalid parameter (``individual.addresses.0.city``) and why; never its value."""
    problems: dict[str, str] = {}
    for error in errors:
        location = [str(part) for part in error.get("loc", ()) if part != "body"]
        if error.get("type") == "json_invalid":
            location = []
        name = ".".join(location) or "body"
        problems.setdefault(name, _reason(error))
    return MalformedRequest(problems=problems)
