"""Request and response bodies of the API. The API's field rules (types, lengths, patterns, enums) live here.

Requests reject unknown fields and coerce nothing (``"true"`` is not a boolean). Responses omit
fields with no value, empty objects and empty arrays (docs/api.md, Conventions).
"""

from __future__ import annotations

import re
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
from phoneid.domain.identity import DOB_PATTERN, SSN_PATTERN, dob_is_valid
from phoneid.domain.possession import sms_template

CORRELATION_ID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
# RFC 3986 characters only; the 2048 limit replaced 128, the character set is unchanged.
_URL = re.compile(r"^https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$")
_EMAIL = r"^[^@\s]{1,64}@[^@\s]{1,255}$"


def _check_dob(value: str) -> str:
    if not dob_is_valid(value):
        raise ValueError("must be an existing date as YYYY-MM-DD, YYYY-MM or MM-DD")
    return value


def _check_full_dob(value: str) -> str:
    if len(value) != 10 or not dob_is_valid(value):
        raise ValueError("must be an existing date as YYYY-MM-DD")
    return value


def _check_url(value: str) -> str:
    if not _URL.match(value):
        raise ValueError("must be an absolute http or https URL of RFC 3986 characters")
    return value


Ssn = Annotated[str, Field(pattern=SSN_PATTERN, description="Full SSN (9 digits) or its last four")]
FullSsn = Annotated[str, Field(pattern=r"^(\d{9}|\d{3}-\d{2}-\d{4})$", description="Full SSN")]
Dob = Annotated[
    str,
    Field(pattern=DOB_PATTERN, description="YYYY-MM-DD, YYYY-MM or MM-DD"),
    AfterValidator(_check_dob),
]
FullDob = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$"), AfterValidator(_check_full_dob)]
CorrelationId = Annotated[str, Field(pattern=CORRELATION_ID_PATTERN)]
TargetUrl = Annotated[str, Field(min_length=1, max_length=2048), AfterValidator(_check_url)]
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
        min_length=1, max_length=160, description="SMS text with one #### to ###### placeholder for the code"
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
    phoneNumber: Annotated[str, Field(max_length=32)] | None = None
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
    phoneNumber: Annotated[str, Field(min_length=1, max_length=32)] | None = None


class OtpRequest(RequestModel):
    otp: Annotated[str, Field(pattern=r"^\d{4,6}$")]


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
    phoneNumber: Annotated[str, Field(max_length=32)] | None = None
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
