"""Connect workflow, step 3 (Step Functions task; input {batchId}): merge the chunk results into the
output and error files under the client's download directory, check that every detail row is in
one of them, send the "processed" email. Raises BatchCountMismatch (the execution fails) when the
count does not hold. Returns {batchId, state, output, errors, stats}."""

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container

logger = Logger()
tracer = Tracer()
metrics = Metrics()


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def _deliver(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(batchId=event["batchId"])
    result = container().connect.deliver(event["batchId"])
    stats = result["stats"]
    metrics.add_metric(name="ConnectRowsRead", unit=MetricUnit.Count, value=stats["rowsRead"])
    metrics.add_metric(name="ConnectRowsNotProcessed", unit=MetricUnit.Count, value=stats["processingFailed"])
    metrics.add_metric(
        name="ConnectBatchesFailed" if result["state"] == "failed" else "ConnectBatchesDelivered",
        unit=MetricUnit.Count,
        value=1,
    )
    return result


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        result: dict[str, Any] = _deliver(event, context)
        return result
    finally:
        metrics.clear_metrics()  # kept when metrics are disabled (local stack, tests); a no-op on Lambda
