"""GET /v3/identity/{id}/lookup: the client's identities of a phone number (the path's ``{id}``)."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.identity_models import ClientRequestIdQuery, LookupResponse, or_not_found
from phoneid.bootstrap import container

app = make_app()


# API Gateway allows one variable name per path level: the phone number sits where others have {id}.
@app.get("/v3/identity/<id>/lookup", responses=or_not_found(LookupResponse))
def lookup(
    id: str,  # the phone number
    client_request_id: ClientRequestIdQuery = None,
) -> LookupResponse:
    return container().identity_manager.lookup(caller(app), id)


handler = entrypoint(app, json_body=False)
