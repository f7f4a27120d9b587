"""The change monitor's state of each identity: attribute ``monitorState`` of the identity's item,
saved only while the identity is active and removed when it is disenrolled."""

from __future__ import annotations

import json
from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.enrollments.items import IDENTITY, Conflict, key
from phoneid.adapters.dynamodb.items import from_ms, ms, plain, to_item
from phoneid.domain.enrollment import Status
from phoneid.domain.monitor import MonitorState


class DynamoMonitorStates:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def monitor_state(self, client_id: str, service_id: str) -> MonitorState | None:
        with provider_errors("monitor state read"):
            response = self._db.get_item(
                TableName=self._table,
                Key=key(f"{client_id}#{service_id}"),
                ProjectionExpression="monitorState",
            )
        stored = plain(response.get("Item") or {}).get("monitorState")
        if not stored:
            return None
        decoded = json.loads(stored)
        return MonitorState(
            facts=decoded.get("facts", {}),
            checked_at=from_ms(decoded["checkedAtMs"]),
            pass_id=decoded.get("passId"),
        )

    def save_monitor_state(self, client_id: str, service_id: str, state: MonitorState) -> bool:
        assert state.checked_at is not None
        stored: dict[str, Any] = {"facts": dict(state.facts), "checkedAtMs": ms(state.checked_at)}
        if state.pass_id is not None:
            stored["passId"] = state.pass_id
        text = json.dumps(stored)
        try:
            with provider_errors("monitor state write", condition_failed=Conflict):
                self._db.update_item(
                    TableName=self._table,
                    Key=key(f"{client_id}#{service_id}"),
                    UpdateExpression="SET monitorState = :state",
                    ConditionExpression="kind = :identity AND clientId = :client AND #status = :active",
                    ExpressionAttributeNames={"#status": "status"},
                    ExpressionAttributeValues=to_item(
                        {
                            ":state": text,
                            ":identity": IDENTITY,
                            ":client": client_id,
                            ":active": Status.ACTIVE.value,
                        }
                    ),
                )
        except Conflict:
            return False  # deactivated or disenrolled meanwhile
        return True
