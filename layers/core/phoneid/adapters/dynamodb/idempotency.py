"""The idempotency table: one item per client and Idempotency-Key (pk ``clientId#sha256(key)``).

Every write is conditional, so two attempts racing for one key never both run: the claim succeeds
for one of them, and only the claimant (``owner``) completes or releases the item. The expiry is
checked in code (the claim's condition), TTL only clears the table some time after.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.items import TTL_GRACE_SECONDS, from_ms, ms, plain, to_item
from phoneid.domain.errors import IdempotencyKeyInUse
from phoneid.domain.idempotency import KeyRecord, RecordStatus


class _Held(Exception):
    """The condition failed: another request holds the key (or the owner lost it)."""


class DynamoIdempotencyStore:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def claim(self, record: KeyRecord, now: datetime) -> KeyRecord | None:
        # Twice at most: a holder released between our refused write and our read leaves nothing to
        # read, and the key is free again.
        for _ in range(2):
            try:
                with provider_errors("idempotency key claim", condition_failed=_Held):
                    self._db.put_item(
                        TableName=self._table,
                        Item=to_item(_values(record)),
                        ConditionExpression=(
                            "attribute_not_exists(pk) OR expiresAtMs <= :now"
                            " OR (#status = :running AND leaseUntilMs <= :now)"
                        ),
                        ExpressionAttributeNames={"#status": "status"},
                        ExpressionAttributeValues={
                            ":now": {"N": str(ms(now))},
                            ":running": {"S": RecordStatus.IN_PROGRESS.value},
                        },
                    )
                return None
            except _Held:
                holder = self._get(record.record_id)
                if holder is not None:
                    return holder
        # The key changed hands twice within one claim: other attempts with it are running now.
        raise IdempotencyKeyInUse()

    def complete(self, record: KeyRecord, response: bytes) -> bool:
        try:
            with provider_errors("idempotency answer write", condition_failed=_Held):
                self._db.update_item(
                    TableName=self._table,
                    Key={"pk": {"S": record.record_id}},
                    UpdateExpression="SET #status = :done, #response = :response",
                    ConditionExpression="#owner = :owner",
                    ExpressionAttributeNames={
                        "#status": "status",
                        "#response": "response",
                        "#owner": "owner",
                    },
                    ExpressionAttributeValues={
                        ":done": {"S": RecordStatus.COMPLETED.value},
                        ":response": {"B": response},
                        ":owner": {"S": record.owner},
                    },
                )
        except _Held:
            return False
        return True

    def release(self, record: KeyRecord) -> None:
        try:
            with provider_errors("idempotency key release", condition_failed=_Held):
                self._db.delete_item(
                    TableName=self._table,
                    Key={"pk": {"S": record.record_id}},
                    ConditionExpression="#owner = :owner",
                    ExpressionAttributeNames={"#owner": "owner"},
                    ExpressionAttributeValues={":owner": {"S": record.owner}},
                )
        except _Held:
            pass  # another attempt took the key over after our lease: it is no longer ours to free

    def _get(self, record_id: str) -> KeyRecord | None:
        with provider_errors("idempotency key read"):
            item = self._db.get_item(TableName=self._table, Key={"pk": {"S": record_id}}, ConsistentRead=True)
        return _record(plain(item["Item"])) if "Item" in item else None


def _values(record: KeyRecord) -> dict[str, Any]:
    return {
        "pk": record.record_id,
        "clientId": record.client_id,
        "fingerprint": record.fingerprint,
        "status": record.status.value,
        "owner": record.owner,
        "leaseUntilMs": ms(record.lease_until),
        "expiresAtMs": ms(record.expires_at),
        "ttl": int(record.expires_at.timestamp()) + TTL_GRACE_SECONDS,
        "response": record.response,
    }


def _record(values: dict[str, Any]) -> KeyRecord:
    response = values.get("response")
    return KeyRecord(
        record_id=str(values["pk"]),
        client_id=str(values["clientId"]),
        fingerprint=str(values["fingerprint"]),
        status=RecordStatus(values["status"]),
        owner=str(values["owner"]),
        lease_until=from_ms(values["leaseUntilMs"]),
        expires_at=from_ms(values["expiresAtMs"]),
        response=bytes(response) if response is not None else None,
    )
