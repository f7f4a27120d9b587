"""SQS (WebhookQueue, batches of 10, partial batch responses): POSTs each change event to its client's
webhook, the batch's deliveries side by side; a failed item is retried by SQS after its backoff, then
dead-lettered."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.data_classes import SQSEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.domain.webhooks import QueuedEvent
from phoneid.tasks import metrics, task_entrypoint


def _deliver_batch(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    messages = [
        QueuedEvent(
            message_id=record.message_id,
            body=record.body,
            receipt=record.receipt_handle,
            receive_count=int(record.attributes.approximate_receive_count),
        )
        for record in SQSEvent(event).records
    ]
    failed = container().webhook_delivery.deliver_batch(
        messages, time_left=lambda: context.get_remaining_time_in_millis() / 1000
    )
    metrics.add_metric(name="WebhookItemsSucceeded", unit=MetricUnit.Count, value=len(messages) - len(failed))
    metrics.add_metric(name="WebhookFailures", unit=MetricUnit.Count, value=len(failed))
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}


handler = task_entrypoint(_deliver_batch)
