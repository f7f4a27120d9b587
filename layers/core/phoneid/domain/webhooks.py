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
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from phoneid import __version__
from phoneid.domain.signals import ChangeEvent, ChangeKind

SECRET_PREFIX: Final = "whsec_"
SIGNATURE_VERSION: Final = "v1"
EVENT_ID_HEADER: Final = "PhoneID-Event-Id"
TIMESTAMP_HEADER: Final = "PhoneID-Timestamp"
SIGNATURE_HEADER: Final = "PhoneID-Signature"
# Names the sender to the receiver's logs and firewall rules, with the version that sent it.
USER_AGENT: Final = f"PhoneID-Webhooks/{__version__}"
MAX_URL_LENGTH: Final = 2048

# Retries: the first after 30 s, doubling per receive, never more than 15 minutes apart.
FIRST_RETRY_SECONDS: Final = 30
MAX_RETRY_SECONDS: Final = 15 * 60
# One POST, from connecting to the answer's last byte: a receiver slower than this fails the attempt.
DELIVERY_DEADLINE_SECONDS: Final = 5.0

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


class WebhookRefused(Exception):
    """PhoneID would not connect: the URL breaks the rules below, or its host resolved to an address
    PhoneID does not deliver to. The message says which rule, and the address; no connection was made."""


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


# --- where a webhook may point (docs/webhooks.md, "Which URLs") -----------------------------------
#
# A webhook URL is the one address a client makes PhoneID's own network send requests to, so it is
# checked twice: when registered (the URL as written: scheme, characters, a public host) and at every
# delivery (every address its host resolves to, then a connection to an address so checked, never a
# second lookup). Loopback is allowed only on the local stack, for receivers on the same machine.

_LOOPBACK = "a loopback address"
_PRIVATE = "a private address (RFC 1918)"
_DOCUMENTATION = "a documentation address"
_METADATA = "the cloud instance metadata address"

# Checked in order: the first range holding an address names why it is refused.
_IPV4_REFUSED: Final = tuple(
    (ipaddress.IPv4Network(network), reason)
    for network, reason in (
        ("0.0.0.0/8", "an unspecified ('this network') address"),
        ("10.0.0.0/8", _PRIVATE),
        ("100.64.0.0/10", "a carrier-grade NAT address"),
        ("127.0.0.0/8", _LOOPBACK),
        ("169.254.169.254/32", _METADATA),
        ("169.254.0.0/16", "a link-local address"),
        ("172.16.0.0/12", _PRIVATE),
        ("192.0.0.0/24", "an IETF protocol assignment address"),
        ("192.0.2.0/24", _DOCUMENTATION),
        ("192.88.99.0/24", "a 6to4 relay address"),
        ("192.168.0.0/16", _PRIVATE),
        ("198.18.0.0/15", "a benchmarking address"),
        ("198.51.100.0/24", _DOCUMENTATION),
        ("203.0.113.0/24", _DOCUMENTATION),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),  # 255.255.255.255 (broadcast) too
    )
)
_IPV6_REFUSED: Final = tuple(
    (ipaddress.IPv6Network(network), reason)
    for network, reason in (
        ("::/128", "the unspecified address"),
        ("::1/128", _LOOPBACK),
        ("fd00:ec2::254/128", _METADATA),
        ("fc00::/7", "a unique local (private) address"),
        ("fe80::/10", "a link-local address"),
        ("fec0::/10", "a site-local address"),
        ("ff00::/8", "a multicast address"),
        ("64:ff9b:1::/48", "a local-use NAT64 address"),
        ("100::/64", "a discard-only address"),
        ("2001:db8::/32", _DOCUMENTATION),
        ("3fff::/20", _DOCUMENTATION),
        ("2001::/23", "an IETF protocol assignment address (Teredo among them)"),
    )
)
_GLOBAL_UNICAST_V6: Final = ipaddress.IPv6Network("2000::/3")
# IPv6 forms that carry an IPv4 address the packets end up at: judged by that address.
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")

# Names that resolve inside a network, never on the internet (RFC 6761, RFC 8375, ICANN's
# name-collision list, the clouds' metadata names such as metadata.google.internal).
_LOOPBACK_NAMES: Final = ("localhost",)
_PRIVATE_SUFFIXES: Final = frozenset(
    {
        "alt",
        "arpa",
        "corp",
        "example",
        "home",
        "internal",
        "intranet",
        "invalid",
        "lan",
        "local",
        "localdomain",
        "onion",
        "private",
        "test",
    }
)
_LABEL: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_NUMERIC_LABEL: Final = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
_AUTHORITY: Final = re.compile(r"^[A-Za-z0-9.:\[\]-]+$")
_MAX_HOST_LENGTH: Final = 253


def address_refusal(address: str, *, allow_loopback: bool = False) -> str | None:
    """Why PhoneID does not deliver to ``address`` (an IP address as text), or None if it does.

    Anything but a public unicast address is refused: private, loopback (unless ``allow_loopback``),
    link-local and metadata, carrier-grade NAT, unspecified, multicast, reserved, documentation and
    benchmarking ranges, and the IPv6 forms of IPv4 addresses (mapped, NAT64, 6to4) by the IPv4
    address they carry."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return "not an IP address"
    if isinstance(parsed, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(parsed)
        if embedded is not None:
            reason = address_refusal(str(embedded), allow_loopback=allow_loopback)
            return f"{reason}, in an IPv6 form" if reason else None
        if parsed.scope_id:
            parsed = ipaddress.IPv6Address(address.split("%", 1)[0])
        refused: tuple[tuple[Any, str], ...] = _IPV6_REFUSED
    else:
        refused = _IPV4_REFUSED
    for network, reason in refused:
        if parsed in network:
            return None if allow_loopback and reason == _LOOPBACK else reason
    if isinstance(parsed, ipaddress.IPv6Address) and parsed not in _GLOBAL_UNICAST_V6:
        return "a reserved address"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _host_refusal(host: str, *, allow_loopback: bool) -> str | None:
    """Why a URL's host (as ``urlsplit`` gives it: lower case, IPv6 without brackets) is refused,
    said of the host ("is a private address ..."), or None."""
    if ":" in host:  # an IPv6 literal
        if not _is_ip(host):
            return "is not an IPv6 address"
        reason = address_refusal(host, allow_loopback=allow_loopback)
        return f"is {reason}" if reason else None
    if host.endswith("."):
        return "ends with a dot"
    labels = host.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):
        # A name ending in a number is an IPv4 address to resolvers and HTTP clients, which also
        # read 2852039166, 0xa9fea9fe or 0251.0376.0251.0376 as 169.254.169.254: only the canonical
        # dotted quad is taken, so the address checked is the address connected to.
        if not _is_ip(host) or str(ipaddress.ip_address(host)) != host:
            return "is not an IPv4 address written as four decimal numbers (a.b.c.d)"
        reason = address_refusal(host, allow_loopback=allow_loopback)
        return f"is {reason}" if reason else None
    if len(host) > _MAX_HOST_LENGTH or not all(_LABEL.match(label) for label in labels):
        return "is not a host name (letters, digits and hyphens, in labels of up to 63 characters)"
    if labels[-1] in _LOOPBACK_NAMES:
        return None if allow_loopback else "is a loopback name"
    if len(labels) < 2:
        return "is not a public host name (a name such as hooks.example.com)"
    if labels[-1] in _PRIVATE_SUFFIXES:
        return f"is a name of a private network (.{labels[-1]}), not a public host name"
    return None


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _is_loopback_host(host: str) -> bool:
    if host.split(".")[-1] in _LOOPBACK_NAMES:
        return True
    return _is_ip(host) and address_refusal(host) == _LOOPBACK


def check_url(url: str, *, allow_loopback: bool = False) -> str:
    """The URL as registered, or ``InvalidWebhookUrl`` saying which rule it breaks.

    https with a public host (a name or an address), a port if any; no spaces, control or other
    non-ASCII characters anywhere, no credentials, no fragment. ``allow_loopback`` (the local stack
    only) also lets a loopback host in, over http or https."""
    if not url or len(url) > MAX_URL_LENGTH:
        raise InvalidWebhookUrl(f"a webhook URL must have 1 to {MAX_URL_LENGTH} characters")
    if any(character.isspace() or not character.isprintable() for character in url):
        raise InvalidWebhookUrl("a webhook URL must not contain spaces or control characters")
    if not url.isascii():
        raise InvalidWebhookUrl(
            "a webhook URL must be ASCII: percent-encode other characters, write an international "
            "host name in its xn-- form"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise InvalidWebhookUrl("a webhook URL must be https://host/...")
    if "@" in parts.netloc:
        raise InvalidWebhookUrl("a webhook URL must not carry credentials; use the signature instead")
    if not _AUTHORITY.match(parts.netloc):
        raise InvalidWebhookUrl("a webhook URL's host must be a host name or an IP address")
    try:
        host, port = parts.hostname, parts.port  # a port that is not a number raises here
    except ValueError:
        raise InvalidWebhookUrl("the webhook URL's port is not a number from 1 to 65535") from None
    if not host:
        raise InvalidWebhookUrl("a webhook URL must be https://host/...")
    if port == 0:
        raise InvalidWebhookUrl("the webhook URL's port is not a number from 1 to 65535")
    refusal = _host_refusal(host, allow_loopback=allow_loopback)
    if refusal is not None:
        raise InvalidWebhookUrl(f"a webhook URL's host must be public: {host} {refusal}")
    if parts.scheme == "http" and not (allow_loopback and _is_loopback_host(host)):
        raise InvalidWebhookUrl("a webhook URL must use https")
    if parts.fragment:
        raise InvalidWebhookUrl("a webhook URL must not have a fragment")
    return url


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
        "User-Agent": USER_AGENT,
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


@dataclass(frozen=True)
class QueuedEvent:
    """One message of the webhook queue as the delivery function received it: its event (``body``,
    see ``to_message``), and what SQS needs to hand it back."""

    message_id: str
    body: str
    receipt: str
    receive_count: int
