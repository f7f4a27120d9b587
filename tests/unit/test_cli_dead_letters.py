"""The webhook queue's dead-letter queue is the one its redrive policy's ARN names: its name and
account read by an ARN parser."""

from __future__ import annotations

import json
from typing import Any

from phoneid_cli.adapters.dead_letters import DeadLetters


class FakeSqs:
    def __init__(self, dead_letter_arn: str) -> None:
        self.dead_letter_arn = dead_letter_arn
        self.asked: list[dict[str, Any]] = []

    def get_queue_attributes(self, QueueUrl: str, AttributeNames: list[str]) -> dict[str, Any]:  # noqa: N803
        policy = {"deadLetterTargetArn": self.dead_letter_arn, "maxReceiveCount": 6}
        return {"Attributes": {"RedrivePolicy": json.dumps(policy)}}

    def get_queue_url(self, **asked: Any) -> dict[str, str]:
        self.asked.append(asked)
        return {"QueueUrl": f"https://sqs.example/{asked['QueueOwnerAWSAccountId']}/{asked['QueueName']}"}


def test_the_dead_letter_queue_is_found_by_the_name_and_account_of_its_arn() -> None:
    # Given a webhook queue whose redrive policy names its dead-letter queue (in the China partition)
    sqs = FakeSqs("arn:aws-cn:sqs:cn-north-1:210987654321:phoneid-webhooks-dlq")

    # When its dead letters are looked for
    dead = DeadLetters(sqs, "https://sqs.example/210987654321/phoneid-webhooks")

    # Then the queue asked for is that name in that account
    assert sqs.asked == [{"QueueName": "phoneid-webhooks-dlq", "QueueOwnerAWSAccountId": "210987654321"}]
    assert dead.dead_url == "https://sqs.example/210987654321/phoneid-webhooks-dlq"
