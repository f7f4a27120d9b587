"""POST /client/v1/session: what the SDK must do to prove possession for this flow."""

from phoneid.api.http import entrypoint, flow_token, make_app
from phoneid.api.models import ClientSession
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.post("/client/v1/session")
def session() -> ClientSession:
    return container().possession.view(flow_token(app))


handler = entrypoint(app, browser=True)
