"""Bodies of /v3/verify and /v3/verify/batch, shaped as the maker's public server SDKs send and parse
them, with neutral names (``serviceId`` for the maker's ``proveId``)."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from phoneid.api.models import CategoryResult, PhoneNumber, RequestModel, ResponseModel, ShortText
from phoneid.domain.verification import UNSUPPORTED_TYPES, VerificationType

MAX_BATCH_ITEMS = 1000
_SUPPORTED = " or ".join(t.value for t in VerificationType)


def _check_type(value: str) -> str:
    if value in {t.value for t in VerificationType}:
        return value
    if value in UNSUPPORTED_TYPES:
        raise ValueError(f"{value} is not offered; use {_SUPPORTED}")
    raise ValueError(f"must be {_SUPPORTED}")


def _check_ip(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError("must be an IPv4 or IPv6 address") from None
    return value


Name = Annotated[str, Field(min_length=1, max_length=128)]
# The document names the two formats the check accepts.
IpAddress = Annotated[
    str,
    Field(max_length=45, json_schema_extra={"anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}),
    AfterValidator(_check_ip),
]
# An enum in the document; checked here so that the maker's other types get their own message.
TypeName = Annotated[
    str,
    Field(max_length=32, json_schema_extra={"enum": [t.value for t in VerificationType]}),
    AfterValidator(_check_type),
]
Email = Annotated[
    str, Field(max_length=254, pattern=r"^[A-Za-z0-9.+_'-]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,}$")
]


class IdentityAttribute(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attributeType: Annotated[str, Field(min_length=1, max_length=64)]
    attributeValue: Annotated[str, Field(min_length=1, max_length=256)]


class VerifyFields(BaseModel):
    """What one verification names, in a single request or a batch item."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    phoneNumber: PhoneNumber
    verificationType: TypeName
    firstName: Name | None = None
    lastName: Name | None = Field(default=None, validate_default=True)
    emailAddress: Email | None = None
    ipAddress: IpAddress | None = None
    userAgent: Annotated[str, Field(max_length=512)] | None = None
    clientCustomerId: ShortText | None = None
    clientHumanId: ShortText | None = None
    identityAttributes: Annotated[list[IdentityAttribute], Field(max_length=10)] | None = None
    # The identity the client already knows of; accepted as sent by integrations of the maker's API.
    serviceId: ShortText | None = Field(default=None, validation_alias=AliasChoices("serviceId", "proveId"))

    @field_validator("lastName")
    @classmethod
    def _names_for_verified_user(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("verificationType") == VerificationType.VERIFIED_USER and (
            value is None or info.data.get("firstName") is None
        ):
            raise ValueError("firstName and lastName are required for verifiedUser")
        return value


class VerifyRequest(RequestModel, VerifyFields):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AddressOut(ResponseModel):
    address: str | None = None
    extendedAddress: str | None = None
    city: str | None = None
    region: str | None = None
    postalCode: str | None = None


class IdentityOut(ResponseModel):
    firstName: str | None = None
    lastName: str | None = None
    assuranceLevel: str
    reasons: list[str]
    addresses: list[AddressOut] | None = None
    emails: list[str] | None = None


class RegistrationOut(ResponseModel):
    date: str | None = None
    region: str | None = None
    registrationNumber: str | None = None
    registrationType: str | None = None


class PersonOut(ResponseModel):
    firstName: str
    lastName: str


class BusinessOut(ResponseModel):
    businessName: str
    tradeName: str | None = None
    taxId: str | None = None
    businessAddress: AddressOut | None = None
    registrationFiling: RegistrationOut | None = None
    relatedPersons: list[PersonOut] | None = None


class Champion(BaseModel):
    label: str


class ModelOutcome(BaseModel):
    champion: Champion


class VerifyResponse(ResponseModel):
    success: Literal["true", "false"]
    correlationId: str
    phoneNumber: str
    clientRequestId: str | None = None
    clientCustomerId: str | None = None
    clientHumanId: str | None = None
    isEnrolled: bool
    serviceId: str | None = None
    servicePhoneAlias: str | None = None
    identity: IdentityOut
    evaluation: dict[str, CategoryResult] | None = None
    signals: list[dict[str, ModelOutcome]]
    businesses: list[BusinessOut] | None = None


class VerifyBatchRequest(RequestModel):
    items: Annotated[list[dict[str, Any]], Field(min_length=1, max_length=MAX_BATCH_ITEMS)]


class VerifyBatchResult(ResponseModel):
    success: Literal["true", "false"]
    phoneNumber: str
    assuranceLevel: str
    clientCustomerId: str | None = None
    clientHumanId: str | None = None
    error: str | None = None
    isEnrolled: bool | None = None
    serviceId: str | None = None
    servicePhoneAlias: str | None = None
    identity: IdentityOut | None = None
    evaluation: dict[str, CategoryResult] | None = None
    signals: list[dict[str, ModelOutcome]] | None = None


class VerifyBatchResponse(ResponseModel):
    correlationId: str
    clientRequestId: str | None = None
    results: list[VerifyBatchResult]
