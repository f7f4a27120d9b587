"""POST /v3/complete: verifies the individual and returns the evaluation."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.staged_models import CompleteRequest, CompleteResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/complete")
def complete(request: CompleteRequest) -> CompleteResponse:
    return container().staged.complete(caller(app), request)


handler = entrypoint(app)
