"""Request and response bodies of the staged flow (``/v3/start``, ``/v3/validate``, ``/v3/challenge``,
``/v3/complete``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StrictBool, ValidationInfo, field_validator

from phoneid.api.models import (
    CategoryResult,
    CorrelationId,
    Dob,
    FullDob,
    NextMap,
    PhoneText,
    RequestModel,
    ResponseModel,
    SmsMessage,
    Ssn,
    TargetUrl,
)

_EMAIL = r"^[^@\s]{1,64}@[^@\s]{1,255}$"


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


class CompleteResponse(ResponseModel):
    success: bool
    next: NextMap
    evaluation: dict[str, CategoryResult] | None = None
