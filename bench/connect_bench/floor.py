"""The floor a run is measured against, in the same run: a plain csv + phonenumbers pass over the
file, and a bare BatchWriteItem of the run's own enrollments and of its decision records (a row's
record is the job's output as much as its enrollment: docs/decision-records.md)."""

from __future__ import annotations

import csv
import time
import uuid
from pathlib import Path
from typing import Any


def floor_pass(path: Path) -> tuple[float, int]:
    """A plain csv + phonenumbers pass over the file: (seconds, numbers that are valid)."""
    import phonenumbers

    began = time.perf_counter()
    valid = 0
    with path.open(newline="", encoding="utf-8") as text:
        for record in csv.reader(text):
            if record[0] != "D" or not record[1]:
                continue
            try:
                number = phonenumbers.parse(record[1], "US")
            except phonenumbers.NumberParseException:
                continue
            valid += phonenumbers.is_valid_number(number)
    return time.perf_counter() - began, valid


def decisions_table(dynamodb: Any, settings: Any) -> str | None:
    """The stack's decision records table, if the revision under test has one."""
    name = getattr(settings, "decisions_table", "")
    if not name:
        return None
    try:
        dynamodb.describe_table(TableName=name)
    except dynamodb.exceptions.ResourceNotFoundException:
        return None
    return str(name)


def table_keys(dynamodb: Any, table: str) -> set[str]:
    """The ``pk`` of every item of the table."""
    keys = set()
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, ProjectionExpression="pk"):
        keys.update(item["pk"]["S"] for item in page.get("Items", []))
    return keys


def floor_writes(dynamodb: Any, source_table: str, before: set[str]) -> tuple[float, int, int]:
    """A bare BatchWriteItem of every item the run made in ``source_table`` (its enrollments: the
    identities, their places and their numbers' rosters; items whose key is in ``before`` were there
    already), copied into a new table of the same moto: (seconds of the writes alone, items, bytes).
    The scan that reads them is not timed."""
    table = f"bench-floor-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    seconds, count, size = 0.0, 0, 0
    for page in dynamodb.get_paginator("scan").paginate(TableName=source_table):
        items = [item for item in page.get("Items", []) if item["pk"]["S"] not in before]
        count += len(items)
        size += sum(_item_bytes(item) for item in items)
        for first in range(0, len(items), 25):
            requests = {table: [{"PutRequest": {"Item": item}} for item in items[first : first + 25]]}
            began = time.perf_counter()
            while requests:
                requests = dynamodb.batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}
            seconds += time.perf_counter() - began
    dynamodb.delete_table(TableName=table)
    return seconds, count, size


def _item_bytes(item: dict[str, Any]) -> int:
    """DynamoDB's item size: attribute names plus values."""
    total = 0
    for name, value in item.items():
        ((_kind, data),) = value.items()
        total += len(name.encode()) + (len(data) if isinstance(data, bytes) else len(str(data).encode()))
    return total
