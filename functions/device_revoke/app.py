"""POST /v3/device/revoke: revokes one of the calling client's device keys."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.unify_models import RevokeRequest, RevokeResponse
from phoneid.bootstrap import container

app = make_app()


@app.post("/v3/device/revoke")
def revoke(request: RevokeRequest) -> RevokeResponse:
    return container().unify.revoke(caller(app), request.deviceId)


handler = entrypoint(app, idempotent=True)
