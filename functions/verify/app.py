"""POST /v3/verify: Verified User or Human Assurance for one number, with no possession step."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.verify_models import VerifyRequest, VerifyResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/verify")
def verify(request: VerifyRequest) -> VerifyResponse:
    return container().verify.verify(caller(app), request)


handler = entrypoint(app, idempotent=True)
