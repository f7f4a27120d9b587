"""POST /client/v1/device-key: the device proves the key it holds (a signature over the session's nonce)."""

from phoneid.api.client_models import ClientSession, KeyProofRequest
from phoneid.api.http import entrypoint, flow_token, make_app
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.post("/client/v1/device-key")
def prove(request: KeyProofRequest) -> ClientSession:
    return container().device_key_client.prove(flow_token(app), request)


handler = entrypoint(app, browser=True)
