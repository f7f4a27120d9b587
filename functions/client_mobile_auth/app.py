"""POST /client/v1/mobile-auth: starts Mobile Auth; the SDK fetches the returned URL."""

from phoneid.api.client_models import ClientSession
from phoneid.api.http import entrypoint, flow_token, make_app, public_base_url
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.post("/client/v1/mobile-auth")
def mobile_auth() -> ClientSession:
    callback = f"{public_base_url(app)}/client/v1/mobile-auth/callback"
    return container().possession.mobile_auth(flow_token(app), callback)


handler = entrypoint(app, browser=True)
