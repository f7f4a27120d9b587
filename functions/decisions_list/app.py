"""GET /v3/decisions: the client's decision records, newest first, a page at a time."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from phoneid.api.decision_models import (
    DEFAULT_PAGE,
    MAX_PAGE,
    DecisionListResponse,
    FromQuery,
    KindQuery,
    OutcomeQuery,
    PhoneQuery,
    ReasonQuery,
    RequestIdFilter,
    ToQuery,
)
from phoneid.api.http import caller, entrypoint, make_app
from phoneid.bootstrap import container

app = make_app()


@app.get("/v3/decisions")
def list_decisions(
    since: FromQuery = None,
    until: ToQuery = None,
    phone_number: PhoneQuery = None,
    kind: KindQuery = None,
    outcome: OutcomeQuery = None,
    reason_code: ReasonQuery = None,
    client_request_id: RequestIdFilter = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE,
    start_key: Annotated[str | None, Query(alias="startKey", min_length=1, max_length=1024)] = None,
) -> DecisionListResponse:
    return container().decisions.list_page(
        caller(app),
        since=since,
        until=until,
        phone_number=phone_number,
        kind=kind,
        outcome=outcome,
        reason=reason_code,
        client_request_id=client_request_id,
        limit=limit,
        start_key=start_key,
    )


handler = entrypoint(app, json_body=False)
