"""The refresh tokens table: one item per token's hash (pk ``tokenHash``), used once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.items import TTL_GRACE_SECONDS, ms, to_item


class _Spent(Exception):
    """A refresh token that is unknown, already used or expired."""


class DynamoRefreshTokenStore:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def put(self, token_hash: str, client_id: str, expires_at: datetime) -> None:
        values = {
            "tokenHash": token_hash,
            "clientId": client_id,
            "expiresAtMs": ms(expires_at),
            "ttl": int(expires_at.timestamp()) + TTL_GRACE_SECONDS,
        }
        with provider_errors("refresh token write"):
            self._db.put_item(TableName=self._table, Item=to_item(values))

    def consume(self, token_hash: str, client_id: str, now: datetime) -> bool:
        try:
            with provider_errors("refresh token use", condition_failed=_Spent):
                self._db.delete_item(
                    TableName=self._table,
                    Key={"tokenHash": {"S": token_hash}},
                    ConditionExpression="clientId = :client AND expiresAtMs > :now",
                    ExpressionAttributeValues={":client": {"S": client_id}, ":now": {"N": str(ms(now))}},
                )
        except _Spent:
            return False
        return True
