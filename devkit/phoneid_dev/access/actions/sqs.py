"""SQS's operations as IAM authorizes them: on the queue, named by its URL."""

from __future__ import annotations

from urllib.parse import urlsplit

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack

MAPPERS = Mappers()


def _queue_arn(call: Call, url: str) -> str:
    account, name = urlsplit(url).path.strip("/").split("/")[-2:]
    return f"arn:aws:sqs:{call.region}:{account}:{name}"


_SQS_ACTIONS = {
    "SendMessage": "sqs:SendMessage",
    "SendMessageBatch": "sqs:SendMessage",
    "ReceiveMessage": "sqs:ReceiveMessage",
    "DeleteMessage": "sqs:DeleteMessage",
    "DeleteMessageBatch": "sqs:DeleteMessage",
    "ChangeMessageVisibility": "sqs:ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
    "GetQueueAttributes": "sqs:GetQueueAttributes",
    "PurgeQueue": "sqs:PurgeQueue",
}


@MAPPERS.maps("sqs", *_SQS_ACTIONS)
def _sqs_queue(call: Call, _: Stack) -> list[Request]:
    return [Request(_SQS_ACTIONS[call.operation], _queue_arn(call, call.params["QueueUrl"]))]


@MAPPERS.maps("sqs", "GetQueueUrl")
def _sqs_queue_url(call: Call, _: Stack) -> list[Request]:
    account = call.params.get("QueueOwnerAWSAccountId") or call.account
    return [Request("sqs:GetQueueUrl", f"arn:aws:sqs:{call.region}:{account}:{call.params['QueueName']}")]
