"""Push before poll: the operator's CAMARA subscription notifications, read as the monitor's facts.

Where the operator offers CAMARA subscriptions, each active identity has one subscription per pushed
signal (CAMARA allows one event type per subscription). A notification is a CloudEvents 1.0 object
POSTed to the stack's sink with the bearer token the stack gave as ``sinkCredential``. Each event
type that the stack subscribes to is a transition (the operator sends it when the change happens), so
it states both the fact now and the fact before it; the monitor's own rules
(``phoneid.domain.monitor.compare``) then decide the change event, exactly as for a polled fact.

- ``sim-swap``: ``...sim-swap-subscriptions.v0.swapped``; ``simChange`` is the event's time (before:
  as saved, so that a swap polled already is not sent twice).
- ``reachability``: ``...device-reachability-status-subscriptions.v0.reachability-disconnected``;
  ``reachable`` false (before: true).
- ``roaming``: ``...device-roaming-status-subscriptions.v0.roaming-on``; ``roaming`` is the country
  (``ZZ`` when unnamed; before: at home).

A ``subscription-ended`` (SIM Swap) or ``subscription-ends`` (Device Status) event ends the
subscription: the signal is polled again until a new subscription is live.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from phoneid.domain.errors import MalformedRequest
from phoneid.domain.monitor import Fact

# Roaming somewhere the operator does not name: never mistaken for "at home" (as the polled answer).
UNKNOWN_COUNTRY: Final = "ZZ"
_MAX_ID_LENGTH: Final = 256


class PushSignal(StrEnum):
    SIM_SWAP = "sim-swap"
    REACHABILITY = "reachability"
    ROAMING = "roaming"


# The monitor's fact each signal stands for: a pushed signal is not polled.
FACTS: Final = {
    PushSignal.SIM_SWAP: Fact.SIM_CHANGE,
    PushSignal.REACHABILITY: Fact.REACHABLE,
    PushSignal.ROAMING: Fact.ROAMING,
}
_API: Final = {
    PushSignal.SIM_SWAP: "org.camaraproject.sim-swap-subscriptions.v0.",
    PushSignal.REACHABILITY: "org.camaraproject.device-reachability-status-subscriptions.v0.",
    PushSignal.ROAMING: "org.camaraproject.device-roaming-status-subscriptions.v0.",
}
# The one event type each subscription asks for.
SUBSCRIBED_TYPE: Final = {
    PushSignal.SIM_SWAP: _API[PushSignal.SIM_SWAP] + "swapped",
    PushSignal.REACHABILITY: _API[PushSignal.REACHABILITY] + "reachability-disconnected",
    PushSignal.ROAMING: _API[PushSignal.ROAMING] + "roaming-on",
}
_ENDED: Final = ("subscription-ended", "subscription-ends")
KEEP: Final = object()  # a transition's "before" that is what the monitor saved


def offered(names: str) -> frozenset[PushSignal]:
    """The signals of a comma-separated setting (``sim-swap,reachability,roaming``); unknown names
    are refused, so that a typing error does not silently leave a signal to polling."""
    return frozenset(PushSignal(name.strip()) for name in names.split(",") if name.strip())


@dataclass(frozen=True)
class CloudEvent:
    id: str
    source: str
    type: str
    time: datetime
    subscription_id: str
    data: dict[str, Any]

    @property
    def ended(self) -> bool:
        return any(self.type.endswith("." + suffix) for suffix in _ENDED)


def parse_cloud_event(payload: Any) -> CloudEvent:
    """A CAMARA notification, else 8001 naming what is wrong (never a value: it may be a number)."""
    if not isinstance(payload, dict):
        raise MalformedRequest("Malformed request: a CloudEvent is a JSON object")
    if payload.get("specversion") != "1.0":
        raise MalformedRequest("Malformed request: specversion must be 1.0")
    for name in ("id", "source", "type", "time"):
        value = payload.get(name)
        if not isinstance(value, str) or not value or len(value) > _MAX_ID_LENGTH:
            raise MalformedRequest(f"Malformed request: {name} must be a non-empty string")
    data = payload.get("data")
    subscription_id = data.get("subscriptionId") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(subscription_id, str) or not subscription_id:
        raise MalformedRequest("Malformed request: data.subscriptionId is required")
    try:
        time = datetime.fromisoformat(payload["time"])
    except ValueError:
        raise MalformedRequest("Malformed request: time must be an RFC 3339 date-time") from None
    if time.tzinfo is None:
        raise MalformedRequest("Malformed request: time must have a time zone")
    return CloudEvent(payload["id"], payload["source"], payload["type"], time, subscription_id, data)


def transition(signal: PushSignal, event: CloudEvent) -> tuple[Fact, Any, Any] | None:
    """(fact, value now, value before or ``KEEP``) of the event, or None when it is none of the
    subscribed types (it changes nothing)."""
    if event.type != SUBSCRIBED_TYPE[signal]:
        return None
    if signal is PushSignal.SIM_SWAP:
        return Fact.SIM_CHANGE, event.time.isoformat(), KEEP
    if signal is PushSignal.REACHABILITY:
        return Fact.REACHABLE, False, True
    countries = event.data.get("countryName")
    if isinstance(countries, list) and countries and isinstance(countries[0], str):
        return Fact.ROAMING, countries[0].upper(), None
    return Fact.ROAMING, UNKNOWN_COUNTRY, None


# --- the sink credential: a selector to find the subscription, a verifier kept only as a hash ---


@dataclass(frozen=True)
class SinkToken:
    selector: str
    verifier: str

    @property
    def bearer(self) -> str:
        return f"{self.selector}.{self.verifier}"

    @property
    def verifier_hash(self) -> str:
        return hash_verifier(self.verifier)


def new_sink_token() -> SinkToken:
    return SinkToken(secrets.token_urlsafe(12), secrets.token_urlsafe(32))


def hash_verifier(verifier: str) -> str:
    return hashlib.sha256(verifier.encode()).hexdigest()


def split_bearer(header: str | None) -> SinkToken | None:
    """The token of an ``Authorization: Bearer <selector>.<verifier>`` header, else None."""
    if not header or not header.startswith("Bearer "):
        return None
    selector, _, verifier = header.removeprefix("Bearer ").strip().partition(".")
    if not selector or not verifier or len(selector) > 64 or len(verifier) > 128:
        return None
    return SinkToken(selector, verifier)


def verifier_matches(token: SinkToken, stored_hash: str) -> bool:
    """Compared in constant time: the hash of what was sent against the hash stored."""
    return hmac.compare_digest(hash_verifier(token.verifier), stored_hash)


@dataclass(frozen=True)
class PushSubscription:
    """One identity's subscription to one signal at the operator, and its sink token's hash."""

    client_id: str
    service_id: str
    signal: PushSignal
    selector: str
    verifier_hash: str
    subscription_id: str
    expires_at: datetime | None  # None: the operator set no end
    ended: bool = False

    def live(self, now: datetime) -> bool:
        return not self.ended and (self.expires_at is None or self.expires_at > now)
