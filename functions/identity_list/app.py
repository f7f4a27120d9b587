"""GET /v3/identity: the client's identities, a page at a time (``startKey`` = previous ``lastKey``)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.identity_models import DEFAULT_PAGE, MAX_PAGE, ClientRequestIdQuery, IdentityListResponse
from phoneid.bootstrap import container

app = make_app()


@app.get("/v3/identity")
def list_identities(
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE,
    start_key: Annotated[str | None, Query(alias="startKey", min_length=1, max_length=512)] = None,
    show_inactive: Annotated[bool, Query(alias="showInactive")] = False,
    client_request_id: ClientRequestIdQuery = None,
) -> IdentityListResponse:
    return container().identity_manager.list_page(
        caller(app), limit=limit, start_key=start_key, show_inactive=show_inactive
    )


handler = entrypoint(app, json_body=False)
