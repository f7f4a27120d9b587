"""Request and response bodies of Identity Manager (``/v3/identity...``).

Identities are named ``serviceId`` on the wire: a neutral word for the maker's ``proveId`` (and
its older ``identityId``). Responses always say ``serviceId``; a request body field that names an
identity accepts all three spellings
(``docs/identity-manager.md#names-serviceid-not-proveid-or-identityid``). Here only the path names one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import BaseModel, ConfigDict, Field

from phoneid.api.models import DeviceId, ErrorBody, PhoneNumber, RequestModel, ResponseModel, ShortText
from phoneid.domain.enrollment import MAX_ATTRIBUTES

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

MAX_BATCH_ITEMS = 100
MAX_PAGE = 1000
DEFAULT_PAGE = 100

Name = Annotated[str, Field(min_length=1, max_length=128)]
# GET and DELETE carry clientRequestId in the query string; error bodies echo it.
ClientRequestIdQuery = Annotated[str | None, Query(alias="clientRequestId", min_length=1, max_length=128)]


class IdentityAttributeModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attributeType: Annotated[str, Field(min_length=1, max_length=64)]
    attributeValue: Annotated[str, Field(min_length=1, max_length=256)]


class EnrollFields(BaseModel):
    """What one enrollment carries; the batch items are exactly these."""

    model_config = ConfigDict(extra="forbid")

    phoneNumber: PhoneNumber
    clientCustomerId: ShortText | None = Field(
        default=None, description="The client's id of the customer: one identity per clientCustomerId"
    )
    clientHumanId: ShortText | None = None
    deviceId: DeviceId | None = Field(default=None, description="The device key's deviceId (unify)")
    firstName: Name | None = None
    lastName: Name | None = None
    identityAttributes: Annotated[list[IdentityAttributeModel], Field(max_length=MAX_ATTRIBUTES)] | None = (
        None
    )


class IdentityEnrollRequest(RequestModel, EnrollFields):
    pass


class IdentityBatchItem(EnrollFields):
    pass


BatchEntry = Annotated[
    IdentityBatchItem | dict[str, Any],
    Field(
        union_mode="left_to_right",
        description="An enroll item; an object that is not a valid one gets its own error in results",
    ),
]


class IdentityBatchRequest(RequestModel):
    items: Annotated[list[BatchEntry], Field(min_length=1, max_length=MAX_BATCH_ITEMS)]


class IdentityStatusRequest(RequestModel):
    """activate and deactivate: nothing but the optional clientRequestId."""


class EnrollResponse(ResponseModel):
    serviceId: str
    success: Literal[True] = True


class SuccessResponse(ResponseModel):
    success: Literal[True] = True


class BatchResult(ResponseModel):
    serviceId: str | None = None
    error: str | None = None


class BatchResponse(ResponseModel):
    results: list[BatchResult]


class IdentitySummary(ResponseModel):
    serviceId: str
    phoneNumber: str
    clientCustomerId: str | None = None
    active: bool


class IdentityListResponse(ResponseModel):
    results: list[IdentitySummary]
    lastKey: str | None = None


class IdentityView(ResponseModel):
    serviceId: str
    phoneNumber: str
    active: bool
    lineType: str | None = None
    countryCode: str
    clientCustomerId: str | None = None
    clientHumanId: str | None = None
    deviceId: str | None = None
    createdAt: int = Field(description="Unix seconds")
    creationString: str = Field(description="ISO-8601, UTC")


class LookupResponse(ResponseModel):
    items: list[IdentityView]


def or_not_found(model: type[BaseModel]) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses of a route that names an identity: ``model``, or 404 with code 8011."""
    return {
        200: {"description": "Successful Response", "content": {"application/json": {"model": model}}},
        404: {
            "description": "Identity not found (8011): no identity of this client matches",
            "content": {"application/json": {"model": ErrorBody}},
        },
    }
