"""DynamoDB's Time to Live, for the local stack: expired items deleted, as the service deletes them,
and each deletion handed to the table's stream consumer as TTL's (the template's ``DynamoDB`` events).

moto keeps items past their ``ttl``; AWS deletes them some time after (within days) and writes a
stream record whose ``userIdentity`` is the DynamoDB service. ``TtlSweeper.sweep()`` does both for
every table of the template with a TTL attribute, on the local clock (which may jump days). Reads
never rely on it: every store checks expiry itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import boto3

from phoneid_dev.events import function_context
from phoneid_dev.stack import LocalStack

TTL_IDENTITY = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
BATCH = 100  # records per invocation, at most the event source's BatchSize


@dataclass(frozen=True)
class TtlTable:
    table: str  # logical id
    attribute: str
    consumers: tuple[str, ...]  # functions with a DynamoDB event on its stream


def ttl_tables(stack: LocalStack) -> list[TtlTable]:
    template = stack.template
    consumers: dict[str, list[str]] = {}
    for name, props in template.of_type("AWS::Serverless::Function").items():
        for event in (props.get("Events") or {}).values():
            if event.get("Type") == "DynamoDB":
                stream = event["Properties"]["Stream"]["Fn::GetAtt"][0]
                consumers.setdefault(stream, []).append(name)
    return [
        TtlTable(name, spec["AttributeName"], tuple(consumers.get(name, ())))
        for name, props in template.of_type("AWS::DynamoDB::Table").items()
        if (spec := props.get("TimeToLiveSpecification")) and spec.get("Enabled")
    ]


class TtlSweeper:
    def __init__(self, stack: LocalStack, now: Callable[[], datetime]) -> None:
        self._stack = stack
        self._now = now
        self._tables = ttl_tables(stack)

    def sweep(self) -> int:
        """Delete every expired item; hand each deletion to the table's consumers. How many."""
        dynamodb = boto3.client("dynamodb")
        deleted = 0
        for table in self._tables:
            physical = self._stack.physical_ids[table.table]
            expired = self._expired(dynamodb, physical, table.attribute)
            key_names = [
                k["AttributeName"] for k in dynamodb.describe_table(TableName=physical)["Table"]["KeySchema"]
            ]
            for item in expired:
                dynamodb.delete_item(TableName=physical, Key={name: item[name] for name in key_names})
            deleted += len(expired)
            for consumer in table.consumers:
                for start in range(0, len(expired), BATCH):
                    records = [_removed(item) for item in expired[start : start + BATCH]]
                    context = function_context(self._stack.template, consumer)
                    self._stack.invoke(consumer, {"Records": records}, context)
        return deleted

    def _expired(self, dynamodb: Any, table: str, attribute: str) -> list[dict[str, Any]]:
        now = int(self._now().timestamp())
        found: list[dict[str, Any]] = []
        request: dict[str, Any] = {
            "TableName": table,
            "FilterExpression": "#ttl < :now",
            "ExpressionAttributeNames": {"#ttl": attribute},
            "ExpressionAttributeValues": {":now": {"N": str(now)}},
        }
        while True:
            page = dynamodb.scan(**request)
            found.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return found
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _removed(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "eventName": "REMOVE",
        "eventSource": "aws:dynamodb",
        "userIdentity": dict(TTL_IDENTITY),
        "dynamodb": {"OldImage": item, "StreamViewType": "OLD_IMAGE"},
    }
