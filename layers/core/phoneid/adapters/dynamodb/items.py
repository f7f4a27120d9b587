"""Item mapping shared by the DynamoDB adapters (one module per table)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

# Expired items are deleted by TTL some time after expiry; code never relies on it.
TTL_GRACE_SECONDS = 24 * 3600


def to_item(values: Mapping[str, Any]) -> dict[str, Any]:
    """DynamoDB attribute values of ``values``; None means the attribute is absent."""
    return {k: _serializer.serialize(v) for k, v in values.items() if v is not None}


def plain(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_ms(value: Any) -> datetime:
    return datetime.fromtimestamp(int(value) / 1000, UTC)
