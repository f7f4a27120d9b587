"""Checks PhoneID made and change events found, per client, in one table (pk, sk) with TTL.

Every partition key starts with the client id, so one client's activity never counts for another:
  ``{client}#n#{phone}``      sk ``{epoch ms}#{random}``     one item per check of the number
  ``{client}#a#{sha256}``     sk ``{epoch ms}#{phone}``      one item per identity attribute of a check
  ``{client}#e#{phone}``      sk ``{occurred ms}#{eventId}`` one item per change event (idempotent)
Epoch milliseconds are zero-padded to 13 digits, so the sort key orders by time and a window is a
key range. Items expire after ``retention`` (400 days); TTL deletes lazily, so reads never reach
further back than the retention either.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from phoneid.adapters.dynamodb.batch_io import put_all, query_pages
from phoneid.adapters.dynamodb.items import from_ms, ms, plain, to_item
from phoneid.domain.signals import ActivityCounts, ChangeEvent, ChangeKind
from phoneid.ports import Clock

RETENTION = timedelta(days=400)


def _sk_time(moment: datetime) -> str:
    return f"{ms(moment):013d}"


def attribute_hash(attribute: str) -> str:
    """How an identity attribute is keyed: its SHA-256. Give normalised attributes (the keys of
    ``phoneid.domain.lists``), and an SSN only as its MAC: a bare hash of nine digits is reversible."""
    return hashlib.sha256(attribute.encode()).hexdigest()


class _Window:
    """Reads never reach past the retention, whatever the window asked (TTL deletes lazily)."""

    def __init__(self, clock: Clock, retention: timedelta) -> None:
        self._clock = clock
        self._retention = retention

    def start(self, since: datetime) -> str:
        return _sk_time(max(since, self._clock.now() - self._retention))

    def ttl(self, at: datetime) -> int:
        return int((at + self._retention).timestamp())


class DynamoActivityLog:
    """ActivityLog: every check of a number, and the identity attributes it carried."""

    def __init__(self, dynamodb: Any, table: str, clock: Clock, retention: timedelta = RETENTION) -> None:
        self._db = dynamodb
        self._table = table
        self._window = _Window(clock, retention)

    def record(self, client_id: str, phone_number: str, attributes: Sequence[str], at: datetime) -> None:
        ttl = self._window.ttl(at)
        check = {
            "pk": f"{client_id}#n#{phone_number}",
            "sk": f"{_sk_time(at)}#{secrets.token_hex(8)}",
            "ttl": ttl,
        }
        seen = [
            {
                "pk": f"{client_id}#a#{attribute_hash(attribute)}",
                "sk": f"{_sk_time(at)}#{phone_number}",
                "phoneNumber": phone_number,
                "ttl": ttl,
            }
            for attribute in dict.fromkeys(attributes)
        ]
        put_all(self._db, self._table, (to_item(item) for item in [check, *seen]), "activity record")

    def counts(
        self,
        client_id: str,
        phone_number: str,
        attributes: Sequence[str],
        *,
        recent_since: datetime,
        history_since: datetime,
    ) -> ActivityCounts:
        others: set[str] = set()
        for attribute in dict.fromkeys(attributes):
            others.update(
                sk.split("#", 1)[1]
                for sk in self._keys(f"{client_id}#a#{attribute_hash(attribute)}", recent_since)
            )
        others.discard(phone_number)
        # One read of the number's checks counts both windows: the longer holds the shorter.
        checks = self._keys(f"{client_id}#n#{phone_number}", min(history_since, recent_since))
        history_start, recent_start = self._window.start(history_since), self._window.start(recent_since)
        return ActivityCounts(
            prior=sum(sk >= history_start for sk in checks),
            recent=sum(sk >= recent_start for sk in checks),
            recent_sharing_attributes=len(others),
        )

    def _keys(self, pk: str, since: datetime) -> list[str]:
        """The sort keys of ``pk``'s entries from ``since`` on (sort keys order as their time does)."""
        pages = query_pages(
            self._db,
            "activity read",
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk >= :since",
            ExpressionAttributeValues={":pk": {"S": pk}, ":since": {"S": self._window.start(since)}},
            ProjectionExpression="sk",
        )
        return [str(item["sk"]["S"]) for page in pages for item in page.get("Items", ())]


class DynamoChangeEventLog:
    """ChangeEventLog: change events by client and number; appending one twice stores it once."""

    def __init__(self, dynamodb: Any, table: str, clock: Clock, retention: timedelta = RETENTION) -> None:
        self._db = dynamodb
        self._table = table
        self._window = _Window(clock, retention)

    def append(self, events: Sequence[ChangeEvent]) -> None:
        put_all(self._db, self._table, (self._item(event) for event in events), "change event record")

    def since(self, client_id: str, phone_number: str, since: datetime) -> list[ChangeEvent]:
        """The client's events of the number that occurred at or after ``since``, oldest first."""
        pages = query_pages(
            self._db,
            "change event read",
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk >= :since",
            ExpressionAttributeValues={
                ":pk": {"S": f"{client_id}#e#{phone_number}"},
                ":since": {"S": self._window.start(since)},
            },
        )
        return [self._event(plain(item)) for page in pages for item in page.get("Items", ())]

    def _item(self, event: ChangeEvent) -> dict[str, Any]:
        return to_item(
            {
                "pk": f"{event.client_id}#e#{event.phone_number}",
                "sk": f"{_sk_time(event.occurred_at)}#{event.event_id}",
                "eventId": event.event_id,
                "kind": event.kind.value,
                "phoneNumber": event.phone_number,
                "occurredAtMs": ms(event.occurred_at),
                "clientId": event.client_id,
                "serviceId": event.service_id,
                "clientCustomerId": event.client_customer_id,
                "description": event.description or None,
                "ttl": self._window.ttl(event.occurred_at),
            }
        )

    @staticmethod
    def _event(values: Mapping[str, Any]) -> ChangeEvent:
        return ChangeEvent(
            event_id=str(values["eventId"]),
            kind=ChangeKind(values["kind"]),
            phone_number=str(values["phoneNumber"]),
            occurred_at=from_ms(values["occurredAtMs"]),
            client_id=str(values["clientId"]),
            service_id=values.get("serviceId"),
            client_customer_id=values.get("clientCustomerId"),
            description=str(values.get("description", "")),
        )
