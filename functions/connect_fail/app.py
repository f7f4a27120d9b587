"""Connect workflow, the catch-all (Step Functions task when a step failed in any way, input
{bucket, key, versionId, etag, failure: {Error, Cause}}; or the EventBridge "Step Functions
Execution Status Change" event of an execution that failed, timed out or was stopped): end the
upload's batch as failed — the client's rejected file and email, the operator's alert — unless it
is already final. Idempotent. Returns {batchId, state, changed}."""

import json
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import logger, metrics, task_entrypoint


def _upload_and_error(event: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The execution's input (the upload) and the error, from either kind of event."""
    detail = event.get("detail")
    if isinstance(detail, dict):  # EventBridge: the execution ended
        return json.loads(detail.get("input") or "{}"), str(
            detail.get("error") or f"execution {detail['status']}"
        )
    failure = event.get("failure") or {}
    return event, str(failure.get("Error") or "States.TaskFailed")


def _fail(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    upload, error = _upload_and_error(event)
    if not upload.get("key"):  # not an upload's execution (a chunk's child execution): nothing to end
        return {"batchId": None, "state": None, "changed": False}
    ended = container().connect.fail.run(
        upload["key"],
        version_id=upload.get("versionId") or None,
        etag=upload.get("etag") or None,
        error=error,
    )
    logger.append_keys(batchId=ended.batch_id)
    if ended.changed:
        metrics.add_metric(name="ConnectBatchesFailed", unit=MetricUnit.Count, value=1)
    return ended.to_json()


handler = task_entrypoint(_fail)
