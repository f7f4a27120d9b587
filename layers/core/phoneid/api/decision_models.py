"""Request and response bodies of decision records (``/v3/decisions...``, docs/decision-records.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import BaseModel, Field

from phoneid.api.models import CategoryResult, ErrorBody, ResponseModel

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

MAX_PAGE = 100
DEFAULT_PAGE = 25
DEFAULT_DAYS = 30  # a list or summary with no `from` starts this many days back
MAX_SUMMARY_DAYS = 366  # a summary counts at most this many days (one read per 100 days)

KindName = Literal["staged", "unify", "verify", "verify-batch", "connect"]
OutcomeName = Literal["pass", "fail", "error"]

# The query strings; error bodies echo clientRequestId from the query, as on every GET and DELETE.
FromQuery = Annotated[
    str | None,
    Query(
        alias="from",
        max_length=40,
        description="ISO 8601 time (list) or date (summary), inclusive; default 30 days back",
    ),
]
ToQuery = Annotated[
    str | None,
    Query(
        alias="to", max_length=40, description="ISO 8601 time, exclusive (list), or date, inclusive (summary)"
    ),
]
SummaryFrom = Annotated[
    str | None,
    Query(alias="from", max_length=10, description="YYYY-MM-DD, inclusive; default 29 days before `to`"),
]
SummaryTo = Annotated[
    str | None, Query(alias="to", max_length=10, description="YYYY-MM-DD, inclusive; default today (UTC)")
]
ClientRequestIdQuery = Annotated[str | None, Query(alias="clientRequestId", min_length=1, max_length=128)]
ErasedNumber = Annotated[str, Query(alias="phoneNumber", min_length=1, max_length=32)]
PhoneQuery = Annotated[str | None, Query(alias="phoneNumber", min_length=1, max_length=32)]
KindQuery = Annotated[KindName | None, Query(alias="kind")]
OutcomeQuery = Annotated[OutcomeName | None, Query(alias="outcome")]
ReasonQuery = Annotated[int | None, Query(alias="reasonCode", ge=1000, le=99999)]
RequestIdFilter = Annotated[
    str | None,
    Query(
        alias="clientRequestId",
        min_length=1,
        max_length=128,
        description="Only decisions whose request carried this clientRequestId (also echoed in errors)",
    ),
]


class NumberShown(ResponseModel):
    """The number as a record shows it: never whole."""

    country: str
    lastTwo: str


class PolicyShown(ResponseModel):
    id: str
    version: str
    hash: str = Field(description="SHA-256 of the policy document's content (canonical JSON), hex")


class PossessionShown(ResponseModel):
    status: Literal["passed", "failed", "pending", "not-asked"]
    method: Literal["mobile-auth", "otp", "instant-link", "preset"] | None = None
    mobileAuth: Literal["not-tried", "redirected", "passed", "failed"]
    smsSent: int
    otpEntries: int
    linksSent: int
    linkOpened: bool
    deviceKey: Literal["used", "bound"] | None = None


class FactShown(BaseModel):
    """A fact whole: its value may be null (observed as nothing), so nothing is left out."""

    signal: str
    value: Any = Field(description='The observed value; {"sourceFailed": true} when its source failed')
    source: str
    asOf: str


class DecisionSummaryItem(ResponseModel):
    """A decision as the list shows it."""

    id: str
    kind: KindName
    flow: str | None = Field(default=None, description="The flow type, or the verification type")
    startedAt: str
    endedAt: str
    outcome: OutcomeName
    success: bool
    reasonCodes: list[int] | None = None
    errorCode: int | None = None
    number: NumberShown | None = None


class DecisionView(DecisionSummaryItem):
    """One decision whole."""

    tier: str
    region: str
    step: str | None = Field(default=None, description="The step whose answer ended the flow")
    clientRequestId: str | None = None
    evaluation: dict[str, CategoryResult] | None = None
    monitoredCodes: list[int] | None = None
    possession: PossessionShown | None = None
    policy: PolicyShown | None = None
    facts: list[FactShown] | None = None


class DecisionListResponse(ResponseModel):
    results: list[DecisionSummaryItem]
    lastKey: str | None = Field(default=None, description="Send as startKey for the next page")


class DayCounts(ResponseModel):
    day: str
    total: int
    passed: int
    failed: int
    errors: int


class Conversion(ResponseModel):
    attempted: int
    succeeded: int
    rate: float | None = Field(
        default=None, description="succeeded / attempted; absent when none was attempted"
    )


class DecisionSummaryResponse(ResponseModel):
    firstDay: str
    lastDay: str
    total: int
    passed: int
    failed: int
    errors: int
    byReasonCode: dict[str, int]
    byKind: dict[str, int]
    byDay: list[DayCounts]
    conversion: dict[str, Conversion] = Field(
        description="sms: texts sent → verified; instantLink: sent → opened; mobileAuth: tried → passed"
    )


class DecisionEraseResponse(ResponseModel):
    erased: int = Field(description="How many of the number's records were erased")


def or_not_found(model: type[BaseModel]) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses of a route that names a decision: ``model``, or 404 with code 8011."""
    return {
        200: {"description": "Successful Response", "content": {"application/json": {"model": model}}},
        404: {
            "description": "Decision not found (8011): no record of this client has the id",
            "content": {"application/json": {"model": ErrorBody}},
        },
    }
