"""POST /client/v1/otp/verify: one entry of the code the customer received."""

from phoneid.api.client_models import ClientSession, OtpRequest
from phoneid.api.http import entrypoint, flow_token, make_app
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.post("/client/v1/otp/verify")
def verify_otp(request: OtpRequest) -> ClientSession:
    return container().possession.verify_otp(flow_token(app), request.otp)


handler = entrypoint(app, browser=True)
