"""The rate limits table: one counter per key and window (pk ``{key}#{windowStart}``), expiring by TTL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.batch_io import read_keys


class _NothingToRelease(Exception):
    pass


class DynamoRateLimiter:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def hit(self, key: str, window_start: int, ttl_seconds: int) -> int:
        with provider_errors("rate limit"):
            response = self._db.update_item(
                TableName=self._table,
                Key={"pk": {"S": f"{key}#{window_start}"}},
                UpdateExpression="ADD hits :one SET #ttl = if_not_exists(#ttl, :ttl)",
                ExpressionAttributeNames={"#ttl": "ttl"},
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":ttl": {"N": str(window_start + ttl_seconds)},
                },
                ReturnValues="UPDATED_NEW",
            )
        return int(response["Attributes"]["hits"]["N"])

    def release(self, key: str, window_start: int) -> None:
        try:
            with provider_errors("rate limit", condition_failed=_NothingToRelease):
                self._db.update_item(
                    TableName=self._table,
                    Key={"pk": {"S": f"{key}#{window_start}"}},
                    UpdateExpression="ADD hits :minus_one",
                    ConditionExpression="hits > :zero",
                    ExpressionAttributeValues={":minus_one": {"N": "-1"}, ":zero": {"N": "0"}},
                )
        except _NothingToRelease:
            pass  # never below zero: a window that expired meanwhile has nothing to give back

    def counts(self, keys: Sequence[tuple[str, int]]) -> list[int]:
        names = [f"{key}#{window_start}" for key, window_start in keys]
        items, unread = read_keys(
            self._db,
            self._table,
            [{"pk": {"S": name}} for name in dict.fromkeys(names)],
            "rate limit",
            provider_errors,
            consistent=True,
        )
        if unread:
            raise internal_error("rate limit")
        found = {item["pk"]["S"]: int(item["hits"]["N"]) for item in items}
        return [found.get(name, 0) for name in names]
