"""Request and response bodies of the API. The API's field rules (types, lengths, patterns, enums) live here.

Requests reject unknown fields and coerce nothing (``"true"`` is not a boolean). Responses omit
fields with no value, empty objects and empty arrays (docs/api.md, Conventions).
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
    StrictBool,
    ValidationInfo,
    field_validator,
    model_serializer,
)

from phoneid.domain.errors import InvalidCorrelationId
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
_EMAIL = r"^[^@\s]{1,64}@[^@\s]{1,255}$"


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


class ResponseModel(BaseModel):
    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
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


class StartRequest(RequestModel):
    flowType: Literal["desktop", "mobile"]
    finalTargetUrl: TargetUrl | None = Field(
        default=None,
        validate_default=True,
        description="Instant Link redirect; required when flowType is desktop",
    )
    phoneNumber: PhoneText | None = None
    ssn: Ssn | None = None
    dob: Dob | None = None
    allowOTPRetry: StrictBool = False
    smsMessage: SmsMessage | None = None

    @field_validator("finalTargetUrl", mode="after")
    @classmethod
    def _required_on_desktop(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("flowType") == "desktop":
            raise ValueError("is required when flowType is desktop")
        return value


class StartResponse(ResponseModel):
    authToken: str
    correlationId: str
    next: NextMap


class CorrelationRequest(RequestModel):
    correlationId: CorrelationId


class ValidateResponse(ResponseModel):
    success: bool
    challengeMissing: bool
    phoneNumber: str | None = None
    next: NextMap


class ChallengeRequest(CorrelationRequest):
    ssn: Ssn | None = None
    dob: Dob | None = None


class AddressModel(ResponseModel):
    model_config = ConfigDict(extra="forbid")

    address: Annotated[str, Field(max_length=256)] | None = None
    city: Annotated[str, Field(max_length=128)] | None = None
    region: Annotated[str, Field(max_length=64)] | None = None
    postalCode: Annotated[str, Field(max_length=32)] | None = None


class Individual(ResponseModel):
    model_config = ConfigDict(extra="forbid")

    firstName: Annotated[str, Field(max_length=128)] | None = None
    lastName: Annotated[str, Field(max_length=128)] | None = None
    addresses: Annotated[list[AddressModel], Field(max_length=10)] | None = None
    ssn: Ssn | None = Field(
        default=None,
        description="Full SSN, or the last four a production challenge returned (matched as last four)",
    )
    dob: FullDob | None = None
    emailAddresses: Annotated[list[Annotated[str, Field(pattern=_EMAIL)]], Field(max_length=10)] | None = None


class IndividualOut(Individual):
    """The individual as returned: production tiers return only the last four of the SSN, which
    ``complete`` accepts back."""


class ChallengeResponse(ResponseModel):
    success: bool
    individual: IndividualOut | None = None
    next: NextMap


class CompleteRequest(CorrelationRequest):
    individual: Individual


class CategoryResult(ResponseModel):
    result: Literal["pass", "fail"]
    failureReasons: dict[str, str] | None = None


class CompleteResponse(ResponseModel):
    success: bool
    next: NextMap
    evaluation: dict[str, CategoryResult] | None = None


class ErrorBody(ResponseModel):
    code: int
    message: str
    clientRequestId: str | None = None
    correlationId: str | None = None
    next: NextMap | None = None


class TokenResponse(BaseModel):
    access_token: str
    refresh_token: str
    refresh_expires_in: int
    token_type: Literal["Bearer"] = "Bearer"
    expires_in: int


# --- client API (called by the SDK with the flow's authToken) ---------------------------------


class PhoneNumberRequest(RequestModel):
    phoneNumber: PhoneNumber | None = None


class OtpRequest(RequestModel):
    otp: Annotated[str, Field(pattern=r"^[0-9]{4,6}$")]


class OtpView(ResponseModel):
    length: int
    sent: bool
    sendsLeft: int
    entriesLeft: int
    expiresAt: str | None = None


class InstantLinkView(ResponseModel):
    sent: bool
    sendsLeft: int
    expiresAt: str | None = None
    websocketUrl: str | None = None


class MobileAuthView(ResponseModel):
    status: Literal["not-tried", "redirect", "passed", "failed"]
    url: str | None = None


class ClientSession(ResponseModel):
    """What the client SDK needs to run possession for one flow."""

    correlationId: str
    flowType: Literal["desktop", "mobile"]
    status: Literal["pending", "passed", "failed"]
    phoneNumberNeeded: bool
    numberChangeAllowed: bool
    methods: list[Literal["mobile-auth", "otp", "instant-link"]]
    mobileAuth: MobileAuthView | None = None
    otp: OtpView | None = None
    instantLink: InstantLinkView | None = None
    deviceKey: DeviceKeyView | None = None
    lastError: str | None = None
    expiresAt: str


# --- unified authentication ---------------------------------------------------------------------

DeviceId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{8,64}$")]


class UnifyRequest(RequestModel):
    phoneNumber: PhoneText | None = None
    possessionType: Literal["mobile", "none"]
    finalTargetUrl: TargetUrl | None = None
    deviceId: DeviceId | None = None
    allowOTPRetry: StrictBool = False
    rebind: StrictBool = False
    checkReputation: StrictBool = False
    smsMessage: SmsMessage | None = None
    clientCustomerId: ShortText | None = None


class UnifyResponse(ResponseModel):
    authToken: str
    correlationId: str
    success: Literal["pending"] = "pending"


class UnifyCorrelationRequest(RequestModel):
    """unify-status and unify-bind answer a missing or malformed correlationId with 8008 (403), not 8001."""

    correlationId: Annotated[str, Field(max_length=128)] | None = None

    def required_correlation_id(self) -> str:
        if self.correlationId is None or not re.match(CORRELATION_ID_PATTERN, self.correlationId):
            raise InvalidCorrelationId()
        return self.correlationId


class UnifyStatusResponse(ResponseModel):
    success: bool
    serviceId: str | None = None
    deviceId: str | None = None
    phoneNumber: str | None = None
    evaluation: dict[str, CategoryResult] | None = None


class RevokeRequest(RequestModel):
    deviceId: DeviceId


class RevokeResponse(ResponseModel):
    success: bool
    deviceId: str


# --- device keys in the client API ----------------------------------------------------------------


class KeyProofRequest(RequestModel):
    deviceId: DeviceId
    signature: Annotated[
        str, Field(pattern=r"^[A-Za-z0-9_-]{80,90}$", description="base64url r||s over the nonce")
    ]
    publicApiKey: ShortText | None = Field(default=None, description="web SDKs: the client's public API key")


class KeyRegistrationRequest(RequestModel):
    publicKey: dict[str, str] = Field(description="P-256 public JWK")
    signature: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{80,90}$")]
    publicApiKey: ShortText | None = None


class KeyRegistrationResponse(ResponseModel):
    deviceId: str


class DeviceKeyView(ResponseModel):
    nonce: str
    deviceId: str | None = None  # the registration the integrator asked for
    registerKey: bool  # register a new key once possession passes


class FlowChoice(RequestModel):
    flowType: Literal["desktop", "mobile"] | None = None


ClientSession.model_rebuild()
