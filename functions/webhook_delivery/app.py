"""SQS (WebhookQueue, batches of 10, partial batch responses): POSTs each change event to its client's
webhook; a failed item is retried by SQS after its backoff, then dead-lettered."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import metrics, task_entrypoint

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def deliver(record: SQSRecord) -> None:
    container().webhook_delivery.deliver(
        record.body,
        receipt=record.receipt_handle,
        receive_count=int(record.attributes.approximate_receive_count),
    )


def _deliver_batch(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response = process_partial_response(
        event=event, record_handler=deliver, processor=processor, context=context
    )
    failed = len(response.get("batchItemFailures", []))
    succeeded = len(event["Records"]) - failed
    metrics.add_metric(name="WebhookItemsSucceeded", unit=MetricUnit.Count, value=succeeded)
    metrics.add_metric(name="WebhookFailures", unit=MetricUnit.Count, value=failed)
    return dict(response)


handler = task_entrypoint(_deliver_batch)
