"""The check of a webhook delivery's signature (docs/webhooks.md#verifying-a-delivery).

A delivery is signed with ``PhoneID-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">``,
keyed with the client's whole webhook secret (``whsec_...``), and ``PhoneID-Timestamp`` in unix
seconds. The OpenAPI document has no webhooks section, so the event's type is written here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ValidationError

SIGNATURE_HEADER = "phoneid-signature"
TIMESTAMP_HEADER = "phoneid-timestamp"
DEFAULT_TOLERANCE_SECONDS = 300

EventType = Literal[
    "SIM_SWAP", "PORT", "LINE_TYPE_CHANGE", "PHONE_NUMBER_CHANGE", "DISCONNECT", "MOVED_OUT_OF_COVERAGE"
]


class WebhookEvent(BaseModel):
    """One change of a watched identity's number (docs/webhooks.md#what-a-delivery-looks-like)."""

    eventId: str
    eventType: EventType | str  # a type added later still parses
    description: str
    phoneNumber: str
    serviceId: str
    clientCustomerId: str | None = None
    occurredAt: str
    sentAt: str


class WebhookVerificationError(ValueError):
    """The delivery is not PhoneID's, was altered, or is too old: answer 400 and drop it."""


def verify_webhook(
    body: bytes,
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> list[WebhookEvent]:
    """The events of a genuine delivery, else ``WebhookVerificationError``.

    ``body``: the raw request body, before any JSON parsing. ``headers``: the request's headers, any
    mapping: names are matched in any case. ``tolerance``: the most seconds the signature's timestamp
    may be from ``now`` (the system clock unless given), either way.
    """
    named = {name.lower(): value for name, value in headers.items()}
    timestamp = named.get(TIMESTAMP_HEADER, "").strip()
    signature = named.get(SIGNATURE_HEADER, "").strip()
    if not timestamp or not signature:
        raise WebhookVerificationError("the PhoneID-Timestamp or PhoneID-Signature header is missing")
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    if not hmac.compare_digest(("v1=" + mac.hexdigest()).encode(), signature.encode()):
        raise WebhookVerificationError("the signature does not match")
    if not timestamp.isdigit():
        raise WebhookVerificationError("the timestamp is not unix seconds")
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance:
        raise WebhookVerificationError(f"the timestamp is more than {tolerance} s from now")
    try:
        events = json.loads(body)["events"]
        return [WebhookEvent.model_validate(event) for event in events]
    except (ValueError, KeyError, TypeError, ValidationError) as error:
        raise WebhookVerificationError("the body is not a delivery of events") from error
