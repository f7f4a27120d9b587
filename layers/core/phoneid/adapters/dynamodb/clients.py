"""The clients table: one item per API client (pk ``clientId``), its webhook secret sealed by KMS."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.items import plain, to_item
from phoneid.domain.clients import Client, Flag, Solution
from phoneid.domain.webhooks import Webhook


class DynamoClientStore:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def put(self, client: Client) -> None:
        values = {
            "clientId": client.client_id,
            "tier": client.tier,
            "region": client.region,
            "solution": client.solution.value,
            "secretHash": client.secret_hash,
            "createdAt": client.created_at.isoformat(),
            "name": client.name,
            "allowedCountries": sorted(client.allowed_countries),
            "flags": sorted(f.value for f in client.flags),
            "enabled": client.enabled,
            "publicApiKey": client.public_api_key,
            "policy": json.dumps(client.policy, separators=(",", ":")) if client.policy else None,
            "webhookUrl": client.webhook.url if client.webhook else None,
            "webhookSecret": client.webhook.secret_sealed if client.webhook else None,  # sealed by KMS
        }
        with provider_errors("client write"):
            self._db.put_item(TableName=self._table, Item=to_item(values))

    @staticmethod
    def _to_client(values: Mapping[str, Any]) -> Client:
        return Client(
            client_id=values["clientId"],
            tier=values["tier"],
            region=values["region"],
            solution=Solution(values["solution"]),
            secret_hash=values["secretHash"],
            created_at=datetime.fromisoformat(values["createdAt"]),
            name=values.get("name", ""),
            allowed_countries=frozenset(values.get("allowedCountries", ())),
            flags=frozenset(Flag(f) for f in values.get("flags", ())),
            enabled=bool(values.get("enabled", True)),
            public_api_key=values.get("publicApiKey", ""),
            policy=json.loads(values["policy"]) if values.get("policy") else None,
            webhook=Webhook(url=values["webhookUrl"], secret_sealed=bytes(values["webhookSecret"]))
            if values.get("webhookUrl") and values.get("webhookSecret")
            else None,
        )

    def get(self, client_id: str) -> Client | None:
        with provider_errors("client read"):
            response = self._db.get_item(TableName=self._table, Key={"clientId": {"S": client_id}})
        item = response.get("Item")
        return self._to_client(plain(item)) if item else None

    def list(self) -> list[Client]:
        clients: list[Client] = []
        with provider_errors("client list"):
            for page in self._db.get_paginator("scan").paginate(TableName=self._table):
                clients.extend(self._to_client(plain(item)) for item in page["Items"])
        return sorted(clients, key=lambda c: c.created_at)
