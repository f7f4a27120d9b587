"""POST /v3/validate: reports the possession result of a staged flow."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.staged_models import CorrelationRequest, ValidateResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/validate")
def validate(request: CorrelationRequest) -> ValidateResponse:
    return container().staged.validate(caller(app), request.correlationId, request.clientRequestId)


handler = entrypoint(app)
