"""POST /v3/unify-status: the outcome of a unified authentication; binds the device key on success."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.unify_models import UnifyCorrelationRequest, UnifyStatusResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/unify-status")
def unify_status(request: UnifyCorrelationRequest) -> UnifyStatusResponse:
    return container().unify.status(caller(app), request.required_correlation_id(), request.clientRequestId)


handler = entrypoint(app)
