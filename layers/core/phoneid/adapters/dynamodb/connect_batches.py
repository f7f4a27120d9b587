"""Connect batches in ConnectBatchesTable: one item per uploaded object version, pk the batch id.

Every state change is one conditional write: ``claim`` puts the batch only if its id is free (a
redelivered upload event finds it taken and stops), ``update`` replaces it only while it is still
in the state the caller read. Items carry no row data (file name, client, counts) and expire 90
days after the upload (``ttl``); ``phoneid connect status`` reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from phoneid.adapters.aws import error_code, provider_errors
from phoneid.adapters.dynamodb.items import plain, to_item
from phoneid.domain.connect import Batch, BatchState

KEPT_FOR = timedelta(days=90)


class DynamoBatchStates:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def claim(self, batch: Batch) -> bool:
        return self._put(batch, "attribute_not_exists(pk)", {}, {})

    def update(self, batch: Batch, expected: BatchState) -> bool:
        return self._put(
            batch,
            "#state = :expected",
            {"#state": "state"},
            {":expected": {"S": expected.value}},
        )

    def get(self, batch_id: str) -> Batch | None:
        with provider_errors("Connect batch read"):
            found = self._db.get_item(
                TableName=self._table, Key={"pk": {"S": batch_id}}, ConsistentRead=True
            ).get("Item")
        return self._batch(plain(found)) if found else None

    def list_recent(self, client_name: str | None = None, limit: int = 20) -> list[Batch]:
        """The newest first. A scan: the table holds 90 days of uploads, read by operators only."""
        request: dict[str, Any] = {"TableName": self._table}
        if client_name is not None:
            request |= {
                "FilterExpression": "clientName = :client",
                "ExpressionAttributeValues": {":client": {"S": client_name}},
            }
        batches: list[Batch] = []
        with provider_errors("Connect batch list"):
            for page in self._db.get_paginator("scan").paginate(**request):
                batches.extend(self._batch(plain(item)) for item in page.get("Items", []))
        batches.sort(key=lambda batch: batch.created_at, reverse=True)
        return batches[:limit]

    # --- writes and mapping ----------------------------------------------------------------------

    def _put(self, batch: Batch, condition: str, names: dict[str, str], values: dict[str, Any]) -> bool:
        request: dict[str, Any] = {
            "TableName": self._table,
            "Item": {"pk": {"S": batch.batch_id}, **to_item(self._values(batch))},
            "ConditionExpression": condition,
        }
        if names:
            request["ExpressionAttributeNames"] = names
        if values:
            request["ExpressionAttributeValues"] = values
        with provider_errors("Connect batch write"):
            try:
                self._db.put_item(**request)
            except ClientError as error:
                if error_code(error) == "ConditionalCheckFailedException":
                    return False
                raise
        return True

    @staticmethod
    def _values(batch: Batch) -> dict[str, Any]:
        return {
            "state": batch.state.value,
            "key": batch.key,
            "fileName": batch.file_name,
            "clientName": batch.client_name,
            "clientId": batch.client_id,
            "verificationType": batch.verification_type,
            "fileRegion": batch.file_region,
            "chunks": batch.chunks,
            "counts": {name: int(n) for name, n in batch.counts.items()},
            "reason": batch.reason,
            "createdAt": batch.created_at.isoformat(),
            "updatedAt": batch.updated_at.isoformat(),
            "ttl": int((batch.created_at + KEPT_FOR).timestamp()),
        }

    @staticmethod
    def _batch(values: Mapping[str, Any]) -> Batch:
        return Batch(
            batch_id=str(values["pk"]),
            key=str(values["key"]),
            file_name=str(values.get("fileName", "")),
            client_name=str(values.get("clientName", "")),
            state=BatchState(values["state"]),
            created_at=datetime.fromisoformat(values["createdAt"]),
            updated_at=datetime.fromisoformat(values["updatedAt"]),
            client_id=values.get("clientId"),
            verification_type=values.get("verificationType"),
            file_region=values.get("fileRegion"),
            chunks=int(values.get("chunks", 0)),
            counts={str(name): int(n) for name, n in (values.get("counts") or {}).items()},
            reason=values.get("reason"),
        )
