"""What every capability's bodies share: the API's field rules (types, lengths, patterns, enums),
the request and response bases, and the error body.

Requests reject unknown fields and coerce nothing (``"true"`` is not a boolean). Responses omit
fields with no value, empty objects and empty arrays (docs/api.md, Conventions).

Each capability's bodies are a module of their own (``staged_models``, ``client_models``,
``unify_models``, ``token_models``, ``identity_models``, ``verify_models``), so that a handler builds
only its own models.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from phoneid.domain.identity import (
    DOB_PATTERN,
    FULL_DOB_PATTERN,
    FULL_SSN_PATTERN,
    SSN_PATTERN,
    dob_problem,
    ssn_problem,
)
from phoneid.domain.possession import sms_template

# Patterns say [0-9], not \d: in Python and in pydantic's engine \d also matches other scripts'
# digits, in the JSON Schema (ECMA-262) of docs/openapi.json it does not.
CORRELATION_ID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
# RFC 3986 characters only; the 2048 limit replaced 128, the character set is unchanged.
URL_PATTERN = r"^https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$"
# The characters of a phone number as people write it; the number itself is checked by the service
# (which reads a blank one as none).
PHONE_PATTERN = r"^ *\+?[0-9 ().-]*$"
# One run of 4 to 6 '#' (the code), no other '#' and no braces: what sms_template accepts.
SMS_MESSAGE_PATTERN = r"^[^#{}]*#{4,6}[^#{}]*$"


def _matching(pattern: str, rule: str) -> Callable[[str], str]:
    """A check of ``pattern`` whose error states ``rule`` (pydantic's own would quote the pattern).

    The pattern also goes in the field's JSON Schema (``json_schema_extra``), so the document shows
    exactly the check."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(rule)
        return value

    return check


def _today() -> datetime:
    # The models cannot reach the injected clock; a date of birth is checked against the UTC date.
    return datetime.now(UTC)


def _check_dob(value: str) -> str:
    problem = dob_problem(value, _today().date())
    if problem:
        raise ValueError(problem)
    return value


def _check_full_dob(value: str) -> str:
    problem = dob_problem(value, _today().date(), full=True)
    if problem:
        raise ValueError(problem)
    return value


def _check_ssn(value: str) -> str:
    problem = ssn_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _check_full_ssn(value: str) -> str:
    problem = ssn_problem(value, full=True)
    if problem:
        raise ValueError(problem)
    return value


Ssn = Annotated[
    str,
    Field(
        json_schema_extra={"pattern": SSN_PATTERN},
        description="Full SSN (9 digits or 123-45-6789) or its last four; never area 000 or 666, "
        "group 00 or serial 0000",
    ),
    AfterValidator(_check_ssn),
]
FullSsn = Annotated[
    str,
    Field(
        json_schema_extra={"pattern": FULL_SSN_PATTERN},
        description="Full SSN (9 digits or 123-45-6789); never area 000 or 666, group 00 or serial 0000",
    ),
    AfterValidator(_check_full_ssn),
]
Dob = Annotated[
    str,
    Field(
        json_schema_extra={"pattern": DOB_PATTERN},
        description="YYYY-MM-DD, YYYY-MM or MM-DD: an existing date from 1900, not after today (UTC)",
    ),
    AfterValidator(_check_dob),
]
FullDob = Annotated[
    str,
    Field(
        json_schema_extra={"pattern": FULL_DOB_PATTERN, "format": "date"},
        description="YYYY-MM-DD: an existing date from 1900, not after today (UTC)",
    ),
    AfterValidator(_check_full_dob),
]
CorrelationId = Annotated[str, Field(pattern=CORRELATION_ID_PATTERN)]
TargetUrl = Annotated[
    str,
    Field(min_length=1, max_length=2048, json_schema_extra={"pattern": URL_PATTERN}),
    AfterValidator(_matching(URL_PATTERN, "must be an absolute http or https URL of RFC 3986 characters")),
]
# As phoneid.domain.phone words it, so that a refusal reads the same from the model or the service.
_PHONE_RULE = "must be a phone number with country code, e.g. +12025550123"
PhoneText = Annotated[
    str,
    Field(
        max_length=32,
        json_schema_extra={"pattern": PHONE_PATTERN},
        description="E.164 (+12025550123); a US stack also takes national digits. The number must be "
        "valid for its country code",
    ),
    AfterValidator(_matching(PHONE_PATTERN, _PHONE_RULE)),
]
PhoneNumber = Annotated[PhoneText, Field(min_length=1)]
ShortText = Annotated[str, Field(min_length=1, max_length=128)]
NextMap = dict[str, str]


class RequestModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    clientRequestId: ShortText | None = Field(
        default=None, description="Echoed in error responses to tie them to the caller's request"
    )


def _omittable_fields_optional(schema: dict[str, Any]) -> None:
    """A list or object field is left out of the answer when empty (``_omit_empty``): the JSON schema
    must not call it required, or a client checking answers against it (the SDKs' types, the fuzzer)
    would be told it is always there."""
    properties = schema.get("properties", {})

    def omittable(field: dict[str, Any]) -> bool:
        kinds = [field, *field.get("anyOf", [])]
        return any(kind.get("type") in ("array", "object") for kind in kinds)

    required = [name for name in schema.get("required", []) if not omittable(properties.get(name, {}))]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)


class ResponseModel(BaseModel):
    model_config = ConfigDict(json_schema_extra=_omittable_fields_optional)

    # No return annotation: pydantic would take it as the answer's JSON schema, and the OpenAPI
    # document (and the SDK types generated from it) would lose every field of every response.
    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data: dict[str, Any] = handler(self)
        return {
            key: value for key, value in data.items() if value is not None and value != {} and value != []
        }


def _check_sms_message(value: str) -> str:
    sms_template(value)  # raises ValueError naming the rule
    return value


SmsMessage = Annotated[
    str,
    Field(
        min_length=1,
        max_length=160,
        json_schema_extra={"pattern": SMS_MESSAGE_PATTERN},
        description="SMS text with one #### to ###### placeholder for the code, no other # or braces",
    ),
    AfterValidator(_check_sms_message),
]


DeviceId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{8,64}$")]


class CategoryResult(ResponseModel):
    result: Literal["pass", "fail"]
    failureReasons: dict[str, str] | None = None


class ErrorBody(ResponseModel):
    code: int
    message: str
    clientRequestId: str | None = None
    correlationId: str | None = None
    next: NextMap | None = None
