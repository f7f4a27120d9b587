"""The fake operator's CAMARA subscriptions (``phoneid_dev.operator``): SIM Swap Subscriptions v0.3,
Device Reachability and Device Roaming Status Subscriptions v0.7.

``POST <api>/subscriptions`` (2-legged token) takes an HTTP sink with an ``ACCESSTOKEN`` sink
credential, one event type and the number in ``config.subscriptionDetail``, and answers 201 with the
subscription; ``DELETE <api>/subscriptions/{id}`` ends it (204, 404 when unknown). When a scripted
fact changes, every subscription of the number whose event it is gets a CloudEvents 1.0 notification,
POSTed to its sink with ``Authorization: Bearer <accessToken>``:

- ``latestSimChange`` set to another date-time: ``...sim-swap-subscriptions.v0.swapped`` (its time);
- ``reachable`` from true (the default) to false: ``...reachability-disconnected``;
- ``roamingCountry`` from none to a country: ``...roaming-on`` (``countryName``).

:meth:`OperatorSubscriptions.end` sends the subscription-ended event and forgets the subscription.
``background`` sends from a thread (the local stack, whose own handler may be what scripted the
fact); else at once, in the caller's thread (tests). ``sent`` keeps each notification and the
sink's answer (0: no answer).
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

_SIM_SWAP = "org.camaraproject.sim-swap-subscriptions.v0."
_REACHABILITY = "org.camaraproject.device-reachability-status-subscriptions.v0."
_ROAMING = "org.camaraproject.device-roaming-status-subscriptions.v0."
# The subscriptions path of each API -> (its name, the event type it offers, its ended event type).
SUBSCRIPTION_APIS: dict[str, tuple[str, str, str]] = {
    "/sim-swap-subscriptions/v0.3/subscriptions": (
        "sim-swap",
        _SIM_SWAP + "swapped",
        _SIM_SWAP + "subscription-ended",
    ),
    "/device-reachability-status-subscriptions/v0.7/subscriptions": (
        "reachability",
        _REACHABILITY + "reachability-disconnected",
        _REACHABILITY + "subscription-ends",
    ),
    "/device-roaming-status-subscriptions/v0.7/subscriptions": (
        "roaming",
        _ROAMING + "roaming-on",
        _ROAMING + "subscription-ends",
    ),
}
SOURCE = "https://operator.phoneid.test/notifications"
Sender = Callable[[str, Mapping[str, str], bytes], int]


def post(url: str, headers: Mapping[str, str], body: bytes) -> int:
    """POST a notification to a sink; its status, 0 when it did not answer."""
    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - the sink given
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0


@dataclass
class Subscription:
    id: str
    api: str  # sim-swap, reachability, roaming
    phone_number: str
    sink: str
    token: str
    types: list[str]
    expires_at: str | None


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"status": status, "code": code, "message": message}


def _invalid(message: str) -> tuple[int, dict[str, Any]]:
    return _error(400, "INVALID_ARGUMENT", message)


@dataclass
class OperatorSubscriptions:
    send: Sender = post
    background: bool = False
    sent: list[dict[str, Any]] = field(default_factory=list)  # {"event", "sink", "status"}
    _subscriptions: dict[str, Subscription] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def active(self) -> list[Subscription]:
        with self._lock:
            return list(self._subscriptions.values())

    # --- the API --------------------------------------------------------------------------------

    def create(self, path: str, payload: Any) -> tuple[int, dict[str, Any]]:
        name, offered, _ = SUBSCRIPTION_APIS[path]
        if not isinstance(payload, dict) or payload.get("protocol") != "HTTP":
            return _invalid("Only HTTP is supported")
        sink, credential = payload.get("sink"), payload.get("sinkCredential") or {}
        if not isinstance(sink, str) or not sink.startswith(("https://", "http://")):
            return _error(400, "INVALID_SINK", "sink not valid for HTTP")
        token = credential.get("accessToken") if isinstance(credential, dict) else None
        if credential.get("credentialType") != "ACCESSTOKEN" or not isinstance(token, str):
            return 400, {
                "status": 400,
                "code": "INVALID_CREDENTIAL",
                "message": "Only Access token is supported",
            }
        if payload.get("types") != [offered]:
            return _invalid(f"types must be [{offered}]")
        config = payload.get("config") or {}
        detail = config.get("subscriptionDetail") or {}
        subject = detail if name == "sim-swap" else detail.get("device") or {}
        phone = subject.get("phoneNumber") if isinstance(subject, dict) else None
        if not isinstance(phone, str) or not phone.startswith("+"):
            return 422, {
                "status": 422,
                "code": "MISSING_IDENTIFIER",
                "message": "The device cannot be identified.",
            }
        subscription = Subscription(
            id=str(uuid.uuid4()),
            api=name,
            phone_number=phone,
            sink=sink,
            token=token,
            types=[offered],
            expires_at=config.get("subscriptionExpireTime"),
        )
        with self._lock:
            self._subscriptions[subscription.id] = subscription
        answer = {
            "id": subscription.id,
            "protocol": "HTTP",
            "sink": sink,
            "types": subscription.types,
            "config": dict(config),
            "startsAt": datetime.now(UTC).isoformat(),
            "status": "ACTIVE",
        }
        if subscription.expires_at:
            answer["expiresAt"] = subscription.expires_at
        return 201, answer

    def delete(self, path: str) -> tuple[int, dict[str, Any] | None]:
        collection, _, subscription_id = path.rpartition("/")
        with self._lock:
            known = self._subscriptions.get(subscription_id)
            if known is None or collection not in SUBSCRIPTION_APIS:
                return 404, {
                    "status": 404,
                    "code": "NOT_FOUND",
                    "message": "The specified resource is not found.",
                }
            del self._subscriptions[subscription_id]
        return 204, None

    # --- notifications --------------------------------------------------------------------------

    def notice(self, phone_number: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
        """Notify the subscriptions of ``phone_number`` of what changed from ``before`` to ``after``."""
        swapped = after.get("latestSimChange")
        events: dict[str, tuple[datetime, dict[str, Any]]] = {}
        if swapped is not None and swapped != before.get("latestSimChange"):
            moment = swapped if isinstance(swapped, datetime) else datetime.fromisoformat(str(swapped))
            events["sim-swap"] = (moment, {"phoneNumber": phone_number})
        if before.get("reachable", True) and after.get("reachable", True) is False:
            events["reachability"] = (datetime.now(UTC), {"device": {"phoneNumber": phone_number}})
        country = after.get("roamingCountry")
        if country and not before.get("roamingCountry"):
            data = {"device": {"phoneNumber": phone_number}, "countryName": [country]}
            events["roaming"] = (datetime.now(UTC), data)
        for subscription in self.active():
            if subscription.phone_number == phone_number and subscription.api in events:
                moment, data = events[subscription.api]
                self._notify(subscription, subscription.types[0], moment, data)

    def end(self, subscription_id: str, reason: str = "NETWORK_TERMINATED") -> None:
        """The operator ends a subscription: its subscription-ended event, then it is forgotten."""
        with self._lock:
            subscription = self._subscriptions.pop(subscription_id)
        ended = next(e for p, (n, _, e) in SUBSCRIPTION_APIS.items() if n == subscription.api)
        data = {"terminationReason": reason, "terminationDescription": "ended by the operator"}
        self._notify(subscription, ended, datetime.now(UTC), data)

    def _notify(self, subscription: Subscription, kind: str, moment: datetime, data: dict[str, Any]) -> None:
        aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        event = {
            "id": str(uuid.uuid4()),
            "source": SOURCE,
            "type": kind,
            "specversion": "1.0",
            "datacontenttype": "application/json",
            "data": {**data, "subscriptionId": subscription.id},
            "time": aware.isoformat().replace("+00:00", "Z"),
        }
        if self.background:
            threading.Thread(target=self.deliver, args=(subscription, event), daemon=True).start()
        else:
            self.deliver(subscription, event)

    def deliver(self, subscription: Subscription, event: dict[str, Any]) -> int:
        """POST one notification to the subscription's sink (again, for a test of repeats)."""
        headers = {
            "Authorization": f"Bearer {subscription.token}",
            "Content-Type": "application/cloudevents+json",
            "x-correlator": str(uuid.uuid4()),
        }
        status = self.send(subscription.sink, headers, json.dumps(event).encode())
        with self._lock:
            self.sent.append({"event": event, "sink": subscription.sink, "status": status})
        return status
