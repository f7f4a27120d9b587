"""The local SMS outbox: every message the stack sent, read from moto's SNS.

Production-tier stacks text phone numbers (SNS ``Publish`` with ``PhoneNumber``); Sandbox stacks
publish to their topic, with the number in a message attribute. Both end up here, in order.
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


class Outbox:
    """What the dev server shows: the messages, each stamped when first seen."""

    def __init__(self) -> None:
        self._seen: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def poll(self) -> list[dict[str, str]]:
        """Messages sent since the last poll."""
        with self._lock:
            current = sent_messages()
            fresh = current[len(self._seen) :]
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            for message in fresh:
                message["at"] = stamp
            self._seen.extend(fresh)
            return fresh

    def messages(self) -> list[dict[str, str]]:
        self.poll()
        return list(self._seen)
