"""The push subscriptions table (pk, sk): the stack's CAMARA subscriptions and the notifications taken.

- ``sink#<selector>``, ``-``: a subscription, found by its sink token's selector; the token's
  verifier only as a SHA-256 hash.
- ``identity#<clientId>#<serviceId>``, ``<signal>``: the identity's subscription to that signal.
- ``event#<sha256>``, ``-``: a notification taken (selector, source, id), kept a few days.

No phone number is stored: the identity's item in the enrollments table has it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.dynamodb.items import from_ms, ms, plain, to_item
from phoneid.domain.push import PushSignal, PushSubscription

# How long an ended subscription's token answers 410 (then 401), and a notification's id is kept.
TOMBSTONE: Final = timedelta(days=30)
EVENT_MEMORY: Final = timedelta(days=7)
_NONE: Final = "-"


class _Taken(Exception):
    pass


def _values(subscription: PushSubscription) -> dict[str, Any]:
    return {
        "clientId": subscription.client_id,
        "serviceId": subscription.service_id,
        "signal": subscription.signal.value,
        "selector": subscription.selector,
        "verifierHash": subscription.verifier_hash,
        "subscriptionId": subscription.subscription_id,
        "expiresAtMs": ms(subscription.expires_at) if subscription.expires_at else None,
    }


def _subscription(item: dict[str, Any]) -> PushSubscription:
    values = plain(item)
    return PushSubscription(
        client_id=values["clientId"],
        service_id=values["serviceId"],
        signal=PushSignal(values["signal"]),
        selector=values["selector"],
        verifier_hash=values["verifierHash"],
        subscription_id=values["subscriptionId"],
        expires_at=from_ms(values["expiresAtMs"]) if "expiresAtMs" in values else None,
        ended=bool(values.get("ended", False)),
    )


def _identity_key(client_id: str, service_id: str) -> str:
    return f"identity#{client_id}#{service_id}"


class DynamoPushSubscriptions:
    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def put(self, subscription: PushSubscription) -> None:
        """The sink item first: a callback that comes at once finds its subscription."""
        values = _values(subscription)
        identity = _identity_key(subscription.client_id, subscription.service_id)
        with provider_errors("push subscription write"):
            for pk, sk in ((f"sink#{subscription.selector}", _NONE), (identity, subscription.signal.value)):
                self._db.put_item(TableName=self._table, Item=to_item({"pk": pk, "sk": sk, **values}))

    def by_selector(self, selector: str) -> PushSubscription | None:
        with provider_errors("push subscription read"):
            item = self._db.get_item(
                TableName=self._table,
                Key={"pk": {"S": f"sink#{selector}"}, "sk": {"S": _NONE}},
                ConsistentRead=True,
            ).get("Item")
        return _subscription(item) if item else None

    def for_identity(self, client_id: str, service_id: str) -> list[PushSubscription]:
        with provider_errors("push subscription read"):
            items = self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": _identity_key(client_id, service_id)}},
            )["Items"]
        return [_subscription(item) for item in items]

    def end(self, subscription: PushSubscription, now: datetime) -> None:
        """The sink item kept as a tombstone (410 to the operator) until TTL; the identity's item
        deleted only while it is still this subscription (a renewal may have replaced it)."""
        with provider_errors("push subscription end"):
            self._db.update_item(
                TableName=self._table,
                Key={"pk": {"S": f"sink#{subscription.selector}"}, "sk": {"S": _NONE}},
                UpdateExpression="SET ended = :true, #ttl = :ttl",
                ExpressionAttributeNames={"#ttl": "ttl"},
                ExpressionAttributeValues={
                    ":true": {"BOOL": True},
                    ":ttl": {"N": str(int((now + TOMBSTONE).timestamp()))},
                },
            )
            try:
                with provider_errors("push subscription end", condition_failed=_Taken):
                    self._db.delete_item(
                        TableName=self._table,
                        Key={
                            "pk": {"S": _identity_key(subscription.client_id, subscription.service_id)},
                            "sk": {"S": subscription.signal.value},
                        },
                        ConditionExpression="selector = :selector",
                        ExpressionAttributeValues={":selector": {"S": subscription.selector}},
                    )
            except _Taken:
                pass  # already replaced or gone

    def claim_event(self, key: str, now: datetime) -> bool:
        try:
            with provider_errors("push notification claim", condition_failed=_Taken):
                self._db.put_item(
                    TableName=self._table,
                    Item=to_item(
                        {"pk": f"event#{key}", "sk": _NONE, "ttl": int((now + EVENT_MEMORY).timestamp())}
                    ),
                    # An expired claim that TTL has not removed yet is free again.
                    ConditionExpression="attribute_not_exists(pk) OR #ttl < :now",
                    ExpressionAttributeNames={"#ttl": "ttl"},
                    ExpressionAttributeValues={":now": {"N": str(int(now.timestamp()))}},
                )
        except _Taken:
            return False
        return True

    def release_event(self, key: str) -> None:
        with provider_errors("push notification release"):
            self._db.delete_item(TableName=self._table, Key={"pk": {"S": f"event#{key}"}, "sk": {"S": _NONE}})
