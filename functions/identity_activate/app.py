"""POST /v3/identity/{id}/activate: monitors the identity (again); idempotent."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.identity_models import IdentityStatusRequest, SuccessResponse, or_not_found
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/identity/<id>/activate", responses=or_not_found(SuccessResponse))
def activate(id: str, request: IdentityStatusRequest) -> SuccessResponse:
    return container().identity_manager.activate(caller(app), id)


handler = entrypoint(app)
