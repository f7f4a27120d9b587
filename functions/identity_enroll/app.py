"""POST /v3/identity: enrolls an identity (a phone number, optionally a customer) for monitoring."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.identity_models import EnrollResponse, IdentityEnrollRequest
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/identity")
def enroll(request: IdentityEnrollRequest) -> EnrollResponse:
    return container().identity_manager.enroll(caller(app), request)


handler = entrypoint(app, idempotent=True)
