"""The data of a provisioned stack's services, as JSON and back: every item of every table, the
latest version of every object of every bucket, and every message of every queue.

Exported by the services' own calls where they have one (a scan, a get); SQS's messages are read
from moto's queues instead, as receiving one would hide it and count a receive. Imported into a
stack just provisioned, before its functions or pollers run: an object put then starts no Connect
batch (the bucket's notifications are off meanwhile), and a message keeps what is left of its delay
and its receive count (a webhook delivery's attempts, ``phoneid.services.webhooks``), both set
in moto's queue as SQS has no call to set them.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import boto3

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _encoded(value: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB attribute value as JSON holds it: binaries in base64, the rest as the API gives it."""
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": _b64(inner)}
    if kind == "BS":
        return {"BS": [_b64(each) for each in inner]}
    if kind == "M":
        return {"M": {name: _encoded(each) for name, each in inner.items()}}
    if kind == "L":
        return {"L": [_encoded(each) for each in inner]}
    return value


def _decoded(value: dict[str, Any]) -> dict[str, Any]:
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": base64.b64decode(inner)}
    if kind == "BS":
        return {"BS": [base64.b64decode(each) for each in inner]}
    if kind == "M":
        return {"M": {name: _decoded(each) for name, each in inner.items()}}
    if kind == "L":
        return {"L": [_decoded(each) for each in inner]}
    return value


# --- DynamoDB ----------------------------------------------------------------------------------


def _scanned(dynamodb: Any, table: str) -> Iterator[dict[str, Any]]:
    page: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        answer = dynamodb.scan(**page)
        yield from answer["Items"]
        if "LastEvaluatedKey" not in answer:
            return
        page["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def export_tables(stack: LocalStack) -> dict[str, list[dict[str, Any]]]:
    dynamodb: Any = boto3.client("dynamodb")
    return {
        logical_id: [
            {name: _encoded(value) for name, value in item.items()}
            for item in _scanned(dynamodb, stack.physical_ids[logical_id])
        ]
        for logical_id in stack.template.of_type("AWS::DynamoDB::Table")
    }


def import_tables(stack: LocalStack, tables: dict[str, list[dict[str, Any]]]) -> None:
    dynamodb: Any = boto3.client("dynamodb")
    for logical_id, items in tables.items():
        table = stack.physical_ids[logical_id]
        for start in range(0, len(items), 25):  # BatchWriteItem's most
            writes = {
                table: [
                    {"PutRequest": {"Item": {name: _decoded(value) for name, value in item.items()}}}
                    for item in items[start : start + 25]
                ]
            }
            while writes:
                writes = dynamodb.batch_write_item(RequestItems=writes).get("UnprocessedItems") or {}


# --- S3 ----------------------------------------------------------------------------------------


def _keys(s3: Any, bucket: str) -> Iterator[str]:
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for listed in page.get("Contents", []):
            yield listed["Key"]


def export_buckets(stack: LocalStack) -> dict[str, list[dict[str, Any]]]:
    """Each object's latest version: its key, body, content type and metadata (earlier versions and
    version ids are not kept: a restarted stack's objects have new ones)."""
    s3: Any = boto3.client("s3")
    buckets: dict[str, list[dict[str, Any]]] = {}
    for logical_id in stack.template.of_type("AWS::S3::Bucket"):
        bucket = stack.physical_ids[logical_id]
        objects = buckets[logical_id] = []
        for key in _keys(s3, bucket):
            got = s3.get_object(Bucket=bucket, Key=key)
            objects.append(
                {
                    "key": key,
                    "body": _b64(got["Body"].read()),
                    "contentType": got.get("ContentType", "binary/octet-stream"),
                    "metadata": got.get("Metadata", {}),
                }
            )
    return buckets


def import_buckets(stack: LocalStack, buckets: dict[str, list[dict[str, Any]]]) -> None:
    s3: Any = boto3.client("s3")
    for logical_id, objects in buckets.items():
        bucket = stack.physical_ids[logical_id]
        notifications = s3.get_bucket_notification_configuration(Bucket=bucket)
        notifications.pop("ResponseMetadata", None)
        # A file put back is not a new upload: no event, so no batch runs again.
        s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={})
        try:
            for kept in objects:
                s3.put_object(
                    Bucket=bucket,
                    Key=kept["key"],
                    Body=base64.b64decode(kept["body"]),
                    ContentType=kept["contentType"],
                    Metadata=kept["metadata"],
                )
        finally:
            s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration=notifications)


# --- SQS ---------------------------------------------------------------------------------------


def _queue(stack: LocalStack, logical_id: str) -> Any:
    from moto.sqs.models import sqs_backends

    name = stack.attributes[(logical_id, "QueueName")]
    return sqs_backends[stack.account_id][stack.aws_region].queues[name]


def export_queues(stack: LocalStack) -> dict[str, list[dict[str, Any]]]:
    """Every message, in flight or not: its body, receive count and how long it stays hidden."""
    from moto.core.utils import unix_time_millis

    now = unix_time_millis()
    queues: dict[str, list[dict[str, Any]]] = {}
    for logical_id in stack.template.of_type("AWS::SQS::Queue"):
        queue = _queue(stack, logical_id)
        with queue._messages_lock:
            messages = list(queue._messages)
        queues[logical_id] = [
            {
                "body": message.body,
                "receiveCount": message.approximate_receive_count,
                "hiddenSeconds": max(0.0, (max(message.visible_at, message.delayed_until) - now) / 1000),
            }
            for message in messages
        ]
    return queues


def import_queues(stack: LocalStack, queues: dict[str, list[dict[str, Any]]]) -> None:
    """Each message sent again, then given its receive count and what was left of its hidden time
    (as if in flight: only its backoff's end makes it visible)."""
    from moto.core.utils import unix_time_millis

    sqs: Any = boto3.client("sqs")
    for logical_id, messages in queues.items():
        queue = _queue(stack, logical_id)
        for kept in messages:
            sent = sqs.send_message(QueueUrl=stack.physical_ids[logical_id], MessageBody=kept["body"])
            with queue._messages_lock:
                for message in queue._messages:
                    if message.id == sent["MessageId"]:
                        message.approximate_receive_count = kept["receiveCount"]
                        message.visible_at = unix_time_millis() + kept["hiddenSeconds"] * 1000
