"""POST /v3/verify/batch: up to 1,000 verifications, one result per item in order."""

from phoneid.api.http import caller, entrypoint, make_app
from phoneid.api.verify_models import VerifyBatchRequest, VerifyBatchResponse
from phoneid.bootstrap import container

app = make_app()

# 1,000 items do not fit in the API's 4 KB body (docs/api.md#bodies-of-the-batch-calls).
MAX_BATCH_BODY_BYTES = 1024 * 1024


@app.post("/v3/verify/batch")
def verify_batch(request: VerifyBatchRequest) -> VerifyBatchResponse:
    return container().verify.verify_batch(caller(app), request)


handler = entrypoint(app, max_body_bytes=MAX_BATCH_BODY_BYTES, idempotent=True)
