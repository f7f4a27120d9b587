"""Connect workflow, the catch-all (Step Functions task when a step failed in any way, input
{bucket, key, versionId, etag, failure: {Error, Cause}}; or the EventBridge "Step Functions
Execution Status Change" event of an execution that failed, timed out or was stopped): end the
upload's batch as failed — the client's rejected file and email, the operator's alert — unless it
is already final. Idempotent. Returns {batchId, state, changed}."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.api.connect_steps import FailedUpload, NotAnUpload
from phoneid.bootstrap import container
from phoneid.tasks import logger, metrics, task_entrypoint


def _fail(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    failed = FailedUpload.of(event)
    if failed.key is None:  # not an upload's execution (a chunk's child execution): nothing to end
        return NotAnUpload().to_json()
    ended = container().connect.fail.run(
        failed.key, version_id=failed.version_id, etag=failed.etag, error=failed.error
    )
    logger.append_keys(batchId=ended.batch_id)
    if ended.changed:
        metrics.add_metric(name="ConnectBatchesFailed", unit=MetricUnit.Count, value=1)
    return ended.to_json()


handler = task_entrypoint(_fail)
