"""The items moto holds, read beside the calls: DynamoDB bills a read on the whole stored item and
a write on the item before and after, neither of which a call's own parameters show."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from bench.cost_bench.dynamodb_units import index_write_units
from phoneid_dev.stack import LocalStack


class StoredItems:
    """Items as moto holds them: what a read is billed on, and a write's item before and after."""

    def __init__(self, stack: LocalStack) -> None:
        from moto.dynamodb.models import dynamodb_backends

        self._backend = dynamodb_backends[stack.account_id][stack.aws_region]
        tables = stack.template.of_type("AWS::DynamoDB::Table")
        self._indexes = {
            stack.physical_ids[name]: props.get("GlobalSecondaryIndexes") or []
            for name, props in tables.items()
        }
        self._keys = {
            stack.physical_ids[name]: [key["AttributeName"] for key in props["KeySchema"]]
            for name, props in tables.items()
        }

    def key_of(self, table: str, item: Mapping[str, Any]) -> dict[str, Any]:
        return {name: item[name] for name in self._keys[table] if name in item}

    def get(self, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        wire = {name: _as_wire(value) for name, value in key.items()}
        try:
            found = self._backend.get_item(table, wire)
        except Exception:  # a malformed key: DynamoDB refuses the call, moto too
            return None
        return found.to_json()["Attributes"] if found is not None else None

    def index_write_units(
        self, table: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
    ) -> int:
        return index_write_units(self._indexes.get(table, []), self._keys[table], before, after)


def _as_wire(value: Any) -> Any:
    """A botocore attribute value as moto's backend takes it: binary as base64 text."""
    if isinstance(value, dict):
        return {kind: _as_wire(each) if kind != "B" else _base64(each) for kind, each in value.items()}
    if isinstance(value, list):
        return [_as_wire(each) for each in value]
    return value


def _base64(value: Any) -> str:
    return value if isinstance(value, str) else base64.b64encode(getattr(value, "value", value)).decode()
