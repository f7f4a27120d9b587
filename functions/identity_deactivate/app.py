"""POST /v3/identity/{id}/deactivate: stops monitoring (and webhooks) without disenrolling; idempotent."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.identity_models import IdentityStatusRequest, SuccessResponse, or_not_found
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/identity/<id>/deactivate", responses=or_not_found(SuccessResponse))
def deactivate(id: str, request: IdentityStatusRequest) -> SuccessResponse:
    return container().identity_manager.deactivate(caller(app), id)


handler = entrypoint(app)
