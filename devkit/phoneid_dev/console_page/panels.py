"""The console's other panels, read from what the stack keeps: the outbox's messages (codes and
link tokens masked), the Connect batches as their table holds them, and each webhook delivery
attempt as the queue poller saw it (docs/adr/0105-a-console-fed-by-what-the-stack-already-sees.md)."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from phoneid.domain.connect import Batch, BatchState
from phoneid.domain.phone import mask
from phoneid.domain.webhooks import MalformedMessage, from_message, retry_delay

MAX_DELIVERIES = 100
MAX_MESSAGES = 100

# A one-time code (4 to 10 digits on their own, not a number's, a port's or an address's) and a link's
# secret (the path after /l/).
_CODE = re.compile(r"(?<![\d+:./])\d{4,10}(?!\d)")
_LINK_TOKEN = re.compile(r"(/l/)[\w-]+")


def masked_text(text: str) -> str:
    """An SMS or email as the console shows it: no code, no link that would work (the outbox,
    ``/_local/outbox``, has them whole)."""
    return _CODE.sub(lambda found: "•" * len(found.group()), _LINK_TOKEN.sub(r"\1…", text))


def messages(sent: list[dict[str, str]]) -> list[dict[str, str]]:
    """The latest messages, newest first, masked: to, via, when, subject (emails) and text."""
    return [
        {
            "to": message.get("to", ""),
            "via": message.get("via", ""),
            "at": message.get("at", ""),
            "subject": message.get("subject", ""),
            "text": masked_text(message.get("text", "")),
        }
        for message in reversed(sent[-MAX_MESSAGES:])
    ]


def batch_row(batch: Batch, chunks_done: int) -> dict[str, Any]:
    """One batch: its file, state, and rows: total, done, passed, failed (the counts its workflow
    stores: ``phoneid.domain.connect.stats``); before delivery, done is in chunks."""
    counts = batch.counts
    rows = int(counts.get("rowsRead", 0))
    passed = int(counts.get("verified", 0))
    # Rows refused at validation and rows the API answered with an error fail too.
    refused = sum(int(n) for key, n in counts.items() if key.startswith(("rejected:", "error:")))
    failed = int(counts.get("notVerified", 0)) + int(counts.get("processingFailed", 0)) + refused
    if batch.state.final:
        progress = 1.0
    elif batch.state is BatchState.VERIFYING and batch.chunks:
        progress = chunks_done / batch.chunks
    else:
        progress = 0.0
    return {
        "batchId": batch.batch_id,
        "file": batch.file_name,
        "client": batch.client_name,
        "state": batch.state.value,
        "createdAt": batch.created_at.isoformat(timespec="seconds"),
        "rows": rows,
        "done": rows if batch.state.final else round(rows * progress),
        "passed": passed,
        "failed": failed,
        "progress": round(progress, 3),
        "chunks": batch.chunks,
        "chunksDone": batch.chunks if batch.state.final else chunks_done,
        "reason": batch.reason,
        "reasons": {
            key.removeprefix("reason:"): int(n) for key, n in counts.items() if key.startswith("reason:")
        },
    }


class WebhookAttempts:
    """Every delivery attempt the webhook queue's poller made, by event: ``seen`` is the poller's
    observer. ``endpoint``: where a client's webhook points now (scheme, host and path only), or None."""

    def __init__(
        self,
        function: str,
        endpoint: Callable[[str], str | None],
        now: Callable[[], datetime],
        max_deliveries: int = MAX_DELIVERIES,
    ) -> None:
        self._function = function
        self._endpoint = endpoint
        self._now = now
        self._max = max_deliveries
        self._deliveries: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def seen(self, function: str, polled: Iterable[Mapping[str, Any]], failed: set[str]) -> None:
        """One batch the poller fed ``function`` (its SQS messages), and which of them failed."""
        if function != self._function:
            return
        for message in polled:
            try:
                event = from_message(str(message.get("Body", "")))
            except MalformedMessage:
                continue
            attempt = _receive_count(message)
            ok = message.get("MessageId") not in failed
            at = self._now()
            with self._lock:
                delivery = self._deliveries.pop(event.event_id, None) or {
                    "eventId": event.event_id,
                    "event": event.kind.value,
                    "clientId": event.client_id,
                    "phone": mask(event.phone_number),
                    "endpoint": self._endpoint(event.client_id),
                    "attempts": [],
                }
                delivery["attempts"].append(
                    {
                        "attempt": attempt,
                        "at": at.isoformat(timespec="seconds"),
                        "outcome": "settled" if ok else "failed",
                        "nextRetry": None
                        if ok
                        else (at + timedelta(seconds=retry_delay(attempt))).isoformat(timespec="seconds"),
                    }
                )
                delivery["outcome"] = "settled" if ok else "retrying"
                self._deliveries[event.event_id] = delivery  # the latest attempt last
                while len(self._deliveries) > self._max:
                    self._deliveries.popitem(last=False)

    def deliveries(self) -> list[dict[str, Any]]:
        """Newest attempt first."""
        with self._lock:
            return [
                {**delivery, "attempts": list(delivery["attempts"])}
                for delivery in reversed(self._deliveries.values())
            ]


def _receive_count(message: Mapping[str, Any]) -> int:
    count = str((message.get("Attributes") or {}).get("ApproximateReceiveCount", "1"))
    return int(count) if count.isascii() and count.isdigit() and len(count) <= 18 else 1
