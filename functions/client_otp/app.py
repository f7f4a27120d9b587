"""POST /client/v1/otp: sends the code (first send, resend, or to a changed number)."""

from phoneid.api.client_models import ClientSession, PhoneNumberRequest
from phoneid.api.http import entrypoint, flow_token, make_app
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.post("/client/v1/otp")
def send_otp(request: PhoneNumberRequest) -> ClientSession:
    return container().possession.send_otp(flow_token(app), request.phoneNumber)


handler = entrypoint(app, browser=True)
