"""The device keys table: one item per client and deviceId (pk ``{clientId}#{deviceId}``)."""

from __future__ import annotations

from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.items import from_ms, ms, plain, to_item
from phoneid.domain.devicekeys import DeviceKey, KeyStatus


class _NoSuchKey(Exception):
    """A revocation whose client has no such key."""


class DynamoDeviceKeyStore:
    """Device keys keyed by client and deviceId: no client can see, use or revoke another's."""

    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    @staticmethod
    def _key(client_id: str, device_id: str) -> dict[str, Any]:
        return {"pk": {"S": f"{client_id}#{device_id}"}}

    def put_request(self, key: DeviceKey) -> dict[str, Any]:
        values = {
            "clientId": key.client_id,
            "deviceId": key.device_id,
            "publicKey": dict(key.public_jwk),
            "phoneNumber": key.phone_number,
            "status": key.status.value,
            "createdAtMs": ms(key.created_at),
            "lastUsedAtMs": ms(key.last_used_at),
        }
        return {
            "TableName": self._table,
            "Item": {**self._key(key.client_id, key.device_id), **to_item(values)},
            # A deviceId is never taken over by another client.
            "ConditionExpression": "attribute_not_exists(pk) OR clientId = :client",
            "ExpressionAttributeValues": {":client": {"S": key.client_id}},
        }

    def get(self, client_id: str, device_id: str) -> DeviceKey | None:
        with provider_errors("device key read"):
            response = self._db.get_item(
                TableName=self._table, Key=self._key(client_id, device_id), ConsistentRead=True
            )
        item = response.get("Item")
        if not item:
            return None
        values = plain(item)
        return DeviceKey(
            client_id=values["clientId"],
            device_id=values["deviceId"],
            public_jwk={str(k): str(v) for k, v in values["publicKey"].items()},
            phone_number=values.get("phoneNumber"),
            status=KeyStatus(values["status"]),
            created_at=from_ms(values["createdAtMs"]),
            last_used_at=from_ms(values["lastUsedAtMs"]),
        )

    def revoke(self, client_id: str, device_id: str) -> bool:
        """Revoke the client's key; False when the client has no such key."""
        try:
            with provider_errors("device key revoke", condition_failed=_NoSuchKey):
                self._db.update_item(
                    TableName=self._table,
                    Key=self._key(client_id, device_id),
                    UpdateExpression="SET #status = :revoked",
                    ConditionExpression="attribute_exists(pk) AND clientId = :client",
                    ExpressionAttributeNames={"#status": "status"},
                    ExpressionAttributeValues={
                        ":revoked": {"S": KeyStatus.REVOKED.value},
                        ":client": {"S": client_id},
                    },
                )
        except _NoSuchKey:
            return False
        return True
