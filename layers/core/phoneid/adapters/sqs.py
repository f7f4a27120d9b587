"""The webhook queue on SQS: one message per change event; a failed delivery waits out its backoff."""

from __future__ import annotations

from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.domain.signals import ChangeEvent
from phoneid.domain.webhooks import to_message

# SQS's own limit on a message's visibility timeout.
MAX_VISIBILITY_SECONDS = 12 * 3600


class SqsWebhookQueue:
    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs = sqs
        self._url = queue_url

    def send(self, event: ChangeEvent) -> None:
        with provider_errors("webhook queue send"):
            self._sqs.send_message(QueueUrl=self._url, MessageBody=to_message(event))

    def retry_later(self, receipt: str, seconds: int) -> None:
        with provider_errors("webhook retry schedule"):
            self._sqs.change_message_visibility(
                QueueUrl=self._url,
                ReceiptHandle=receipt,
                VisibilityTimeout=max(0, min(seconds, MAX_VISIBILITY_SECONDS)),
            )
