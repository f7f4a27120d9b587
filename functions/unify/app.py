"""POST /v3/unify: begins a unified authentication."""

from phoneid.api.http import caller, entrypoint, make_app, public_base_url
from phoneid.api.unify_models import UnifyRequest, UnifyResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/unify")
def unify(request: UnifyRequest) -> UnifyResponse:
    return container().unify.unify(caller(app), request, public_base_url(app))


handler = entrypoint(app)
