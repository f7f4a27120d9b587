"""The table of token signing keys: one item per window (pk ``window``, its date).

Public attributes (``window``, ``jwk``, ``notBefore``, ``notAfter``) are all a verifier reads, by a
projection its IAM policy requires (``dynamodb:Attributes``); ``sealedPrivateKey`` is read only by
the functions that sign, and removed when the window closes. The item expires (``ttl``) once no
token its key signed can be valid.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.batch_io import read_keys
from phoneid.adapters.dynamodb.items import TTL_GRACE_SECONDS
from phoneid.domain.token_keys import KeyWindow, PublicKey, SealedKey

PUBLIC_ATTRIBUTES = ("window", "jwk", "notBefore", "notAfter")
SEALED = "sealedPrivateKey"


class _Exists(Exception):
    """The window already has a key, or (forgetting) no longer has its private half."""


class DynamoTokenKeyStore:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def public_keys(self, windows: Sequence[KeyWindow]) -> list[PublicKey]:
        found, unread = read_keys(
            self._db,
            self._table,
            [{"window": {"S": window.name}} for window in windows],
            "token keys read",
            provider_errors,
            attributes=PUBLIC_ATTRIBUTES,
        )
        if unread:  # a verifier that misses a key would refuse good tokens: an 8000 instead
            raise internal_error("token keys read")
        return sorted((_public(item) for item in found), key=lambda key: key.not_before)

    def sealed(self, window: KeyWindow) -> SealedKey | None:
        with provider_errors("signing key read"):
            item = self._db.get_item(
                TableName=self._table, Key={"window": {"S": window.name}}, ConsistentRead=True
            ).get("Item")
        if item is None:
            return None
        sealed = item.get(SEALED, {}).get("B")
        return SealedKey(window, json.loads(item["jwk"]["S"]), bytes(sealed) if sealed else None)

    def create(self, key: SealedKey) -> bool:
        try:
            with provider_errors("signing key write", condition_failed=_Exists):
                self._db.put_item(
                    TableName=self._table,
                    Item=_item(key),
                    ConditionExpression="attribute_not_exists(#window)",
                    ExpressionAttributeNames={"#window": "window"},
                )
        except _Exists:
            return False
        return True

    def replace(self, key: SealedKey) -> None:
        with provider_errors("signing key write"):
            self._db.put_item(TableName=self._table, Item=_item(key))

    def forget_private(self, window: KeyWindow) -> bool:
        try:
            with provider_errors("signing key removal", condition_failed=_Exists):
                self._db.update_item(
                    TableName=self._table,
                    Key={"window": {"S": window.name}},
                    UpdateExpression="REMOVE #sealed",
                    ConditionExpression="attribute_exists(#sealed)",
                    ExpressionAttributeNames={"#sealed": SEALED},
                )
        except _Exists:
            return False
        return True


def _item(key: SealedKey) -> dict[str, Any]:
    assert key.sealed_private is not None
    return {
        "window": {"S": key.window.name},
        "jwk": {"S": json.dumps(dict(key.jwk), separators=(",", ":"), sort_keys=True)},
        "notBefore": {"N": str(int(key.window.opens.timestamp()))},
        "notAfter": {"N": str(int(key.window.closes.timestamp()))},
        SEALED: {"B": key.sealed_private},
        "ttl": {"N": str(int(key.window.last_token_expires.timestamp()) + TTL_GRACE_SECONDS)},
    }


def _public(item: dict[str, Any]) -> PublicKey:
    return PublicKey(
        jwk=json.loads(item["jwk"]["S"]),
        not_before=datetime.fromtimestamp(int(item["notBefore"]["N"]), UTC),
        not_after=datetime.fromtimestamp(int(item["notAfter"]["N"]), UTC),
    )
