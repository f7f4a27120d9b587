"""POST /client/v1/instant-link: texts the Instant Link (first send, resend, or to a changed number)."""

from phoneid.api.client_models import ClientSession, PhoneNumberRequest
from phoneid.api.http import entrypoint, flow_token, make_app, public_base_url
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.post("/client/v1/instant-link")
def send_link(request: PhoneNumberRequest) -> ClientSession:
    return container().possession.send_link(flow_token(app), request.phoneNumber, public_base_url(app))


handler = entrypoint(app, browser=True)
