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
        from moto.dynamodb.models import dynamodb_backends

        backend = dynamodb_backends[self._stack.account_id][self._stack.aws_region]
        dynamodb = boto3.client("dynamodb")
        deleted = 0
        for table in self._tables:
            physical = self._stack.physical_ids[table.table]
            stored = backend.get_table(physical)
            # From moto's table, not DescribeTable: its item count walks the table, which raises
            # while other threads write to it.
            key_names = [name for name in (stored.hash_key_attr, stored.range_key_attr) if name]
            expired = _expired(stored, table.attribute, self._now().timestamp())
            for item in expired:
                dynamodb.delete_item(TableName=physical, Key={name: item[name] for name in key_names})
            deleted += len(expired)
            for consumer in table.consumers:
                for start in range(0, len(expired), BATCH):
                    records = [_removed(item) for item in expired[start : start + BATCH]]
                    context = function_context(self._stack.template, consumer)
                    self._stack.invoke(consumer, {"Records": records}, context)
        return deleted


def _expired(stored: Any, attribute: str, now: float) -> list[dict[str, Any]]:
    """The items of moto's table ``stored`` whose ``attribute`` is a time before ``now``, read from its
    storage as TTL reads DynamoDB's own: not with ``Scan``, whose every page moto finds by sorting the
    whole table (a table of a million items took minutes a sweep and held up every other call)."""
    # Copied in one step each (``list`` of a dict view runs under the GIL): handlers on other
    # threads write meanwhile, and a dict that grows while a loop walks it raises.
    groups: list[Any] = list(stored.items.values())
    found: list[dict[str, Any]] = []
    for group in groups:
        for item in list(group.values()) if stored.range_key_attr else [group]:
            value = item.attrs.get(attribute)
            if value is not None and value.type == "N" and _number(value.value) < now:
                found.append(item.to_json()["Attributes"])
    return found


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # DynamoDB checks numbers; nothing here to sweep
        return float("inf")


def _removed(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "eventName": "REMOVE",
        "eventSource": "aws:dynamodb",
        "userIdentity": dict(TTL_IDENTITY),
        "dynamodb": {"OldImage": item, "StreamViewType": "OLD_IMAGE"},
    }
