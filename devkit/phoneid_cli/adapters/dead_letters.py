"""The webhook queue's dead-letter queue on SQS: its messages listed in place, or sent back."""

from __future__ import annotations

import json
from typing import Any

from botocore.utils import ArnParser


class DeadLetters:
    """``queue_url``: the webhook queue; its dead-letter queue is the one its redrive policy names."""

    def __init__(self, sqs: Any, queue_url: str) -> None:
        self.sqs = sqs
        self.queue_url = queue_url
        attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["RedrivePolicy"])
        target = ArnParser().parse_arn(
            json.loads(attributes["Attributes"]["RedrivePolicy"])["deadLetterTargetArn"]
        )
        self.dead_url: str = sqs.get_queue_url(
            QueueName=target["resource"], QueueOwnerAWSAccountId=target["account"]
        )["QueueUrl"]

    def peek(self) -> list[dict[str, Any]]:
        """Every dead-lettered message, left in place (each listing counts as one receive)."""
        messages = self._receive_all(hold_seconds=30)
        for message in messages:  # visible again at once: listing removes nothing
            self.sqs.change_message_visibility(
                QueueUrl=self.dead_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
        return messages

    def redrive(self) -> int:
        """Every dead-lettered message back to the queue, its body (and event id) unchanged."""
        moved = 0
        for message in self._receive_all(hold_seconds=120):
            self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=message["Body"])
            self.sqs.delete_message(QueueUrl=self.dead_url, ReceiptHandle=message["ReceiptHandle"])
            moved += 1
        return moved

    def _receive_all(self, hold_seconds: int) -> list[dict[str, Any]]:
        """Every message, each received once and hidden for ``hold_seconds`` meanwhile."""
        messages: dict[str, dict[str, Any]] = {}
        while True:
            batch = self.sqs.receive_message(
                QueueUrl=self.dead_url,
                MaxNumberOfMessages=10,
                VisibilityTimeout=hold_seconds,
                WaitTimeSeconds=0,
                MessageSystemAttributeNames=["All"],
            ).get("Messages", [])
            if not batch:
                return list(messages.values())
            messages.update({message["MessageId"]: message for message in batch})
