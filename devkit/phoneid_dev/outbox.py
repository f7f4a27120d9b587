"""The local outbox: every message the stack sent, read from moto's SNS (SMS) and SES (email).

Production-tier stacks text phone numbers (SNS ``Publish`` with ``PhoneNumber``); Sandbox stacks
publish to their topic, with the number in a message attribute. Both end up here, in order. Connect's
batch emails (SES) follow as ``{"to", "subject", "text", "via": "email", "from"}``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

_ACCOUNT = "123456789012"


# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the local server imports this module before moto starts.


def _backend() -> Any:
    from moto.sns.models import sns_backends

    return sns_backends[_ACCOUNT][os.environ.get("AWS_DEFAULT_REGION", "us-east-1")]


def sent_messages() -> list[dict[str, str]]:
    """Every SMS moto recorded, oldest first: ``{"to", "text", "via"}``."""
    backend = _backend()
    # Copied in one step (``list`` of a dict view runs under the GIL): handlers on other threads
    # publish meanwhile, and a dict that grows while a loop walks it raises.
    messages = [
        {"to": number, "text": text, "via": "sms"} for number, text in list(backend.sms_messages.values())
    ]
    for topic in list(backend.topics.values()):
        for _id, text, _subject, attributes, _group in list(topic.sent_notifications):
            number = ((attributes or {}).get("phoneNumber") or {}).get("Value") or ""
            if number:
                messages.append({"to": number, "text": text, "via": "sandbox-topic"})
    return messages


def _ses_backend() -> Any:
    from moto.ses.models import ses_backends

    return ses_backends[_ACCOUNT][os.environ.get("AWS_DEFAULT_REGION", "us-east-1")]


def sent_emails() -> list[dict[str, str]]:
    """Every plain email moto's SES recorded (API v1 or v2), oldest first."""
    from moto.ses.models import Message

    emails = []
    for message in list(_ses_backend().sent_messages):
        if not isinstance(message, Message):
            continue  # raw and templated messages: nothing of ours sends them
        destinations = message.destinations
        to = [
            address
            for kind in ("ToAddresses", "CcAddresses", "BccAddresses")
            for address in destinations.get(kind, [])
        ]
        emails.append(
            {
                "to": ", ".join(to),
                "subject": str(message.subject),
                "text": str(message.body),
                "via": "email",
                "from": str(message.source),
            }
        )
    return emails


def printed_line(message: dict[str, str]) -> str:
    """The terminal line for one message."""
    if message["via"] == "email":
        return f"EMAIL to {message['to']}: {message['subject']}"
    return f"SMS to {message['to']}: {message['text']}"


def _utc_stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Outbox:
    """What the dev server shows: the messages, each stamped when first seen.

    Collecting (for ``/_local/outbox``) and printing keep separate places: a reader of the list never
    takes a message away from the terminal, and the printer gets each message exactly once.
    """

    def __init__(
        self,
        texts: Callable[[], list[dict[str, str]]] = sent_messages,
        emails: Callable[[], list[dict[str, str]]] = sent_emails,
        stamp: Callable[[], str] = _utc_stamp,
    ) -> None:
        self._texts, self._emails, self._stamp = texts, emails, stamp
        self._seen: list[dict[str, str]] = []
        self._sms_seen = 0
        self._emails_seen = 0
        self._printed = 0  # how many of _seen the printer has had
        self._lock = threading.Lock()

    def _collect(self) -> None:
        """Append what was sent since the last look (texts, then emails); the caller holds the lock."""
        texts, emails = self._texts(), self._emails()
        fresh = texts[self._sms_seen :] + emails[self._emails_seen :]
        self._sms_seen, self._emails_seen = len(texts), len(emails)
        stamp = self._stamp()
        for message in fresh:
            message["at"] = stamp
        self._seen.extend(fresh)

    def messages(self) -> list[dict[str, str]]:
        """Every message so far, oldest first."""
        with self._lock:
            self._collect()
            return list(self._seen)

    def unprinted(self) -> list[dict[str, str]]:
        """The messages this method has not returned before, oldest first: for the printer."""
        with self._lock:
            self._collect()
            fresh = self._seen[self._printed :]
            self._printed = len(self._seen)
            return fresh
