"""POST /v3/identity/batch: enrolls up to 100 identities; each item gets its serviceId or its error."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.identity_models import BatchResponse, IdentityBatchRequest
from phoneid.bootstrap import container

app = make_app()

# 100 items do not fit in the API's 4 KB body (docs/api.md#bodies-of-the-batch-calls).
MAX_BATCH_BODY_BYTES = 64 * 1024


@app.post("/v3/identity/batch")
def enroll_batch(request: IdentityBatchRequest) -> BatchResponse:
    return container().identity_manager.enroll_batch(caller(app), request)


handler = entrypoint(app, max_body_bytes=MAX_BATCH_BODY_BYTES, idempotent=True)
