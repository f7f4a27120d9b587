"""GET /v3/identity/{id}: one of the client's identities."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.identity_models import ClientRequestIdQuery, IdentityView, or_not_found
from phoneid.bootstrap import container

app = make_app()


@app.get("/v3/identity/<id>", responses=or_not_found(IdentityView))
def get_identity(
    id: str,
    client_request_id: ClientRequestIdQuery = None,
) -> IdentityView:
    return container().identity_manager.get(caller(app), id)


handler = entrypoint(app, json_body=False)
