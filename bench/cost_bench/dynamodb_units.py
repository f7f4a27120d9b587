"""DynamoDB's request units, from item sizes by DynamoDB's size rules: moto reports no consumed
capacity, so the bench sizes what each call read and wrote (tests/unit/test_cost_model.py checks it)."""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from bench.cost_bench.prices import READ_UNIT_BYTES, WRITE_UNIT_BYTES


def number_size(text: str) -> int:
    """A DynamoDB number's size: one byte per two significant digits (leading and trailing zeros
    trimmed), plus one."""
    digits = Decimal(text).normalize().as_tuple().digits
    return math.ceil(len(digits) / 2) + 1


def binary_size(value: Any) -> int:
    """Bytes of a binary value: raw from botocore, base64 text as moto stores it."""
    if isinstance(value, str):
        return len(base64.b64decode(value))
    return len(getattr(value, "value", value))


def attribute_value_size(value: Mapping[str, Any]) -> int:
    """The size DynamoDB bills for one attribute value in its wire form ({"S": "..."} and so on)."""
    ((kind, data),) = value.items()
    if kind == "S":
        return len(data.encode())
    if kind == "N":
        return number_size(data)
    if kind == "B":
        return binary_size(data)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(each.encode()) for each in data)
    if kind == "NS":
        return sum(number_size(each) for each in data)
    if kind == "BS":
        return sum(binary_size(each) for each in data)
    if kind == "L":  # 3 bytes for the list, 1 per element
        return 3 + sum(1 + attribute_value_size(each) for each in data)
    if kind == "M":  # 3 bytes for the map, 1 per element, plus each element's name
        return 3 + sum(1 + len(name.encode()) + attribute_value_size(each) for name, each in data.items())
    raise ValueError(f"unknown DynamoDB type {kind}")


def item_size(item: Mapping[str, Any] | None) -> int:
    """An item's size: each attribute's name in UTF-8 plus its value."""
    return sum(len(name.encode()) + attribute_value_size(value) for name, value in (item or {}).items())


def read_units(size: int, *, consistent: bool) -> float:
    """Read request units of one read of ``size`` bytes: per started 4 KB, half when eventually
    consistent; an absent item still costs the minimum."""
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    return units if consistent else units / 2


def write_units(size: int) -> int:
    """Write request units of writing ``size`` bytes: per started 1 KB, at least one."""
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def index_entry(
    index: Mapping[str, Any], table_keys: list[str], item: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """What a global secondary index holds of ``item``: None when the item lacks the index's key."""
    index_keys = [key["AttributeName"] for key in index["KeySchema"]]
    if item is None or not all(name in item for name in index_keys):
        return None  # a sparse index: the item is not in it
    projection = index.get("Projection", {})
    if projection.get("ProjectionType", "ALL") == "ALL":
        return dict(item)
    kept = {*table_keys, *index_keys, *projection.get("NonKeyAttributes", [])}
    return {name: value for name, value in item.items() if name in kept}


def index_write_units(
    indexes: list[Mapping[str, Any]],
    table_keys: list[str],
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
) -> int:
    """Write units of the index entries one item's write changes: an entry rewritten in place costs
    one write, one that moves (its index key changed) a delete and a put; an unchanged one nothing."""
    units = 0
    for index in indexes:
        old, new = (index_entry(index, table_keys, item) for item in (before, after))
        if old == new:
            continue
        index_keys = [key["AttributeName"] for key in index["KeySchema"]]
        if old is not None and new is not None and all(old[k] == new[k] for k in index_keys):
            units += write_units(item_size(new))
        else:
            units += sum(write_units(item_size(entry)) for entry in (old, new) if entry is not None)
    return units


def whole_item_query(params: Mapping[str, Any]) -> dict[str, Any]:
    """A Query or Scan as DynamoDB bills it: the same keys and page, whole items, no filter."""
    plain = {
        k: v for k, v in params.items() if k not in ("Select", "ProjectionExpression", "FilterExpression")
    }
    condition = str(plain.get("KeyConditionExpression", ""))
    for placeholders in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        # Placeholders only the dropped expressions used would be refused as unused.
        used = {
            k: v for k, v in plain.get(placeholders, {}).items() if re.search(rf"{re.escape(k)}\b", condition)
        }
        if used:
            plain[placeholders] = used
        else:
            plain.pop(placeholders, None)
    return plain
