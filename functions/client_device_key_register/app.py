"""POST /client/v1/device-key/register: a new key, bound when the flow succeeds."""

from phoneid.api.client_models import KeyRegistrationRequest, KeyRegistrationResponse
from phoneid.api.http import entrypoint, flow_token, make_app
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.post("/client/v1/device-key/register")
def register(request: KeyRegistrationRequest) -> KeyRegistrationResponse:
    return container().device_key_client.register(flow_token(app), request)


handler = entrypoint(app, browser=True)
