"""Connect workflow, step 3 (Step Functions task; input {batchId}): merge the chunk results into the
output and error files under the client's download directory, check that every detail row is in
one of them, send the "processed" email. Raises BatchCountMismatch (the execution fails) when the
count does not hold. Returns {batchId, state, output, errors, stats}."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.api.connect_steps import BatchTask
from phoneid.bootstrap import container
from phoneid.domain.connect import BatchState
from phoneid.tasks import logger, metrics, task_entrypoint


def _deliver(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = BatchTask.model_validate(event)
    logger.append_keys(batchId=task.batch_id)
    delivered = container().connect.deliver.run(task.batch_id)
    stats = delivered.stats
    metrics.add_metric(name="ConnectRowsRead", unit=MetricUnit.Count, value=stats.rows_read)
    metrics.add_metric(name="ConnectRowsNotProcessed", unit=MetricUnit.Count, value=stats.processing_failed)
    metrics.add_metric(
        name="ConnectBatchesFailed" if delivered.state is BatchState.FAILED else "ConnectBatchesDelivered",
        unit=MetricUnit.Count,
        value=1,
    )
    return delivered.to_json()


handler = task_entrypoint(_deliver)
