"""DELETE /v3/identity/{id}: disenrolls an identity and deletes its PII at once."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.identity_models import ClientRequestIdQuery, SuccessResponse, or_not_found
from phoneid.bootstrap import container

app = make_app()


@app.delete("/v3/identity/<id>", responses=or_not_found(SuccessResponse))
def disenroll(
    id: str,
    client_request_id: ClientRequestIdQuery = None,
) -> SuccessResponse:
    return container().identity_manager.disenroll(caller(app), id)


handler = entrypoint(app, json_body=False)
