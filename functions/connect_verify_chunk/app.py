"""Connect workflow, step 2 (a Distributed Map's child task; input one manifest item {batchId,
chunk, key}): verify every row of the chunk as /v3/verify does, writing the chunk's results object.
Raises ChunkThrottled (retried by the state machine with backoff) when an upstream throttles."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.api.connect_steps import ChunkTask
from phoneid.bootstrap import container
from phoneid.tasks import logger, metrics, task_entrypoint


def _verify_chunk(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = ChunkTask.model_validate(event)
    logger.append_keys(batchId=task.batch_id, chunk=task.chunk)
    metrics.add_metric(name="ConnectChunkAttempts", unit=MetricUnit.Count, value=1)  # retries included
    verified = container().connect.verify_chunk.run(task.batch_id, task.chunk, task.key)
    metrics.add_metric(name="ConnectRowsVerified", unit=MetricUnit.Count, value=verified.rows)
    metrics.add_metric(name="ConnectRowsPassed", unit=MetricUnit.Count, value=verified.passed)
    return verified.to_json()


handler = task_entrypoint(_verify_chunk)
