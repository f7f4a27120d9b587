"""The local outbox: every message the stack sent, read from moto's SNS (SMS) and SES (email).

Production-tier stacks text phone numbers (SNS ``Publish`` with ``PhoneNumber``); Sandbox stacks
publish to their topic, with the number in a message attribute. Both end up here, in order. Connect's
batch emails (SES) follow as ``{"to", "subject", "text", "via": "email", "from"}``.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

_ACCOUNT = "123456789012"


def _backend() -> Any:
    from moto.sns.models import sns_backends

    return sns_backends[_ACCOUNT][os.environ.get("AWS_DEFAULT_REGION", "us-east-1")]


def sent_messages() -> list[dict[str, str]]:
    """Every SMS moto recorded, oldest first: ``{"to", "text", "via"}``."""
    backend = _backend()
    messages = [{"to": number, "text": text, "via": "sms"} for number, text in backend.sms_messages.values()]
    for topic in list(backend.topics.values()):
        for _id, text, _subject, attributes, _group in topic.sent_notifications:
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


class Outbox:
    """What the dev server shows: the messages, each stamped when first seen."""

    def __init__(self) -> None:
        self._seen: list[dict[str, str]] = []
        self._sms_seen = 0
        self._emails_seen = 0
        self._lock = threading.Lock()

    def poll(self) -> list[dict[str, str]]:
        """Messages sent since the last poll (texts, then emails)."""
        with self._lock:
            texts, emails = sent_messages(), sent_emails()
            fresh = texts[self._sms_seen :] + emails[self._emails_seen :]
            self._sms_seen, self._emails_seen = len(texts), len(emails)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            for message in fresh:
                message["at"] = stamp
            self._seen.extend(fresh)
            return fresh

    def messages(self) -> list[dict[str, str]]:
        self.poll()
        return list(self._seen)
