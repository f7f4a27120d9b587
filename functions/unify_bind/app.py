"""POST /v3/unify-bind: binds the registered device key when the integrator did possession itself."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.unify_models import UnifyCorrelationRequest, UnifyStatusResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/unify-bind")
def unify_bind(request: UnifyCorrelationRequest) -> UnifyStatusResponse:
    return container().unify.bind(caller(app), request.required_correlation_id(), request.clientRequestId)


handler = entrypoint(app)
