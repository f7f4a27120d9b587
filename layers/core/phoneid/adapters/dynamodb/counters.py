"""The rate-limit table's counters, readable without counting: the failed-authentication throttle reads
them before it lets an attempt through (``phoneid.services.ratelimit.AuthThrottle``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb import DynamoRateLimiter

_ROUNDS = 3


class DynamoCounters(DynamoRateLimiter):
    """Same items as ``DynamoRateLimiter.hit`` writes (``{key}#{window_start}``, ``hits``)."""

    def counts(self, keys: Sequence[tuple[str, int]]) -> list[int]:
        names = [f"{key}#{window_start}" for key, window_start in keys]
        found: dict[str, int] = {}
        pending: dict[str, Any] = {
            self._table: {
                "Keys": [{"pk": {"S": name}} for name in dict.fromkeys(names)],
                "ConsistentRead": True,
            }
        }
        for _ in range(_ROUNDS):
            with provider_errors("rate limit"):
                response = self._db.batch_get_item(RequestItems=pending)
            for item in response.get("Responses", {}).get(self._table, []):
                found[item["pk"]["S"]] = int(item["hits"]["N"])
            pending = response.get("UnprocessedKeys") or {}
            if not pending:
                return [found.get(name, 0) for name in names]
        raise internal_error("rate limit")
