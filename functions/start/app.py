"""POST /v3/start: begins a staged possession flow."""

from phoneid.api.http import caller, entrypoint, make_app, public_base_url
from phoneid.api.staged_models import StartRequest, StartResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/start")
def start(request: StartRequest) -> StartResponse:
    return container().staged.start(caller(app), request, public_base_url(app))


handler = entrypoint(app, idempotent=True)
