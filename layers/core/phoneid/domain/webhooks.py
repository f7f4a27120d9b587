"""Change-event webhooks: the registered endpoint, the payload, its signature and the retry schedule.

A delivery is one HTTP POST of one event, signed with the client's secret:

    PhoneID-Event-Id:  the event id (the same on every retry of the event: de-duplicate on it)
    PhoneID-Timestamp: unix seconds when this attempt was signed
    PhoneID-Signature: v1=<hex HMAC-SHA256(key=secret, message="<timestamp>.<body>")>

The key is the whole secret string as UTF-8 (``whsec_`` included). Pure Python: no I/O here.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from phoneid.domain.signals import ChangeEvent, ChangeKind

SECRET_PREFIX: Final = "whsec_"
SIGNATURE_VERSION: Final = "v1"
EVENT_ID_HEADER: Final = "PhoneID-Event-Id"
TIMESTAMP_HEADER: Final = "PhoneID-Timestamp"
SIGNATURE_HEADER: Final = "PhoneID-Signature"
MAX_URL_LENGTH: Final = 2048

# Retries: the first after 30 s, doubling per receive, never more than 15 minutes apart.
FIRST_RETRY_SECONDS: Final = 30
MAX_RETRY_SECONDS: Final = 15 * 60

DESCRIPTIONS: Final[dict[ChangeKind, str]] = {
    ChangeKind.SIM_SWAP: "The number's SIM card changed.",
    ChangeKind.PORT: "The number was ported to another carrier.",
    ChangeKind.LINE_TYPE_CHANGE: "The number's line type changed.",
    ChangeKind.PHONE_NUMBER_CHANGE: "The number changed subscriber (it was recycled) since enrollment.",
    ChangeKind.DISCONNECT: "The number is no longer reachable on its network.",
    ChangeKind.MOVED_OUT_OF_COVERAGE: "The device is roaming outside its home country.",
}


class InvalidWebhookUrl(ValueError):
    """The URL is not one PhoneID delivers to; the message says why (never echoing the query)."""


class WebhookUnreachable(Exception):
    """No HTTP answer from the receiver (refused, timed out, TLS failure); the message names the
    kind of failure only."""


@dataclass(frozen=True)
class Webhook:
    """A client's endpoint; the signing secret is kept only sealed (KMS, context clientId + use)."""

    url: str
    secret_sealed: bytes


def new_secret() -> str:
    """``whsec_`` and 43 base64url characters (256 random bits)."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def secret_context(client_id: str) -> dict[str, str]:
    """The encryption context of a client's sealed secret: it opens for that client only."""
    return {"clientId": client_id, "use": "webhook"}


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> str:
    """The URL as registered: https with a host, no credentials or fragment; http only on loopback
    (the local stack's receivers)."""
    text = url.strip()
    if not text or len(text) > MAX_URL_LENGTH:
        raise InvalidWebhookUrl(f"a webhook URL must have 1 to {MAX_URL_LENGTH} characters")
    parts = urlsplit(text)
    try:
        host, _ = parts.hostname, parts.port  # a port that is not a number raises here
    except ValueError:
        raise InvalidWebhookUrl("the webhook URL's port is not a number") from None
    if parts.scheme not in ("https", "http") or not host:
        raise InvalidWebhookUrl("a webhook URL must be https://host/...")
    if parts.scheme == "http" and not _loopback(host):
        raise InvalidWebhookUrl("a webhook URL must use https (http only for loopback hosts)")
    if parts.username is not None or parts.password is not None:
        raise InvalidWebhookUrl("a webhook URL must not carry credentials; use the signature instead")
    if parts.fragment:
        raise InvalidWebhookUrl("a webhook URL must not have a fragment")
    return text


def loggable_url(url: str) -> str:
    """Scheme, host, port and path only: the query string may carry a receiver's token."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``PhoneID-Signature`` value of ``body`` sent at ``timestamp``."""
    message = str(timestamp).encode() + b"." + body
    digest = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    return f"{SIGNATURE_VERSION}={digest}"


def retry_delay(receive_count: int) -> int:
    """Seconds before the next attempt after attempt number ``receive_count`` (1-based) failed:
    30 s x 2^(receive count - 1), capped at 15 minutes."""
    exponent = max(0, receive_count - 1)
    if exponent >= 16:  # far past the cap; avoids big integers
        return MAX_RETRY_SECONDS
    return min(FIRST_RETRY_SECONDS * (1 << exponent), MAX_RETRY_SECONDS)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def event_fields(event: ChangeEvent, sent_at: datetime) -> dict[str, Any]:
    """One event as the receiver gets it."""
    fields: dict[str, Any] = {
        "eventId": event.event_id,
        "eventType": event.kind.value,
        "description": event.description or DESCRIPTIONS[event.kind],
        "phoneNumber": event.phone_number,
        "serviceId": event.service_id,
    }
    if event.client_customer_id is not None:
        fields["clientCustomerId"] = event.client_customer_id
    fields["occurredAt"] = _iso(event.occurred_at)
    fields["sentAt"] = _iso(sent_at)
    return fields


def delivery_body(event: ChangeEvent, sent_at: datetime) -> bytes:
    """The POST body: ``{"events": [event]}`` (an array, one event per delivery)."""
    return json.dumps({"events": [event_fields(event, sent_at)]}, separators=(",", ":")).encode()


def delivery_headers(event: ChangeEvent, secret: str, body: bytes, timestamp: int) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        EVENT_ID_HEADER: event.event_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: sign(secret, timestamp, body),
    }


# --- the queue message of one event -------------------------------------------------------------


def to_message(event: ChangeEvent) -> str:
    """The queued form of an event (the client id says whose webhook gets it)."""
    return json.dumps(
        {
            "eventId": event.event_id,
            "eventType": event.kind.value,
            "clientId": event.client_id,
            "phoneNumber": event.phone_number,
            "serviceId": event.service_id,
            "clientCustomerId": event.client_customer_id,
            "description": event.description,
            "occurredAt": event.occurred_at.astimezone(UTC).isoformat(),
        },
        separators=(",", ":"),
    )


class MalformedMessage(ValueError):
    """A queued message that is not an event of ours."""


def from_message(text: str) -> ChangeEvent:
    try:
        fields = json.loads(text)
        occurred = datetime.fromisoformat(fields["occurredAt"])
        return ChangeEvent(
            event_id=str(fields["eventId"]),
            kind=ChangeKind(fields["eventType"]),
            phone_number=str(fields["phoneNumber"]),
            occurred_at=occurred if occurred.tzinfo else occurred.replace(tzinfo=UTC),
            client_id=str(fields["clientId"]),
            service_id=fields.get("serviceId"),
            client_customer_id=fields.get("clientCustomerId"),
            description=str(fields.get("description") or ""),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        raise MalformedMessage("not a change event message") from None
