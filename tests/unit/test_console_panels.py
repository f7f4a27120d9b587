"""The console's other panels (``phoneid_dev.console_page.panels``): messages with their codes and
link tokens masked, a Connect batch's progress and row counts, and each webhook attempt."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from phoneid.domain.connect import Batch, BatchState
from phoneid_dev.console_page.panels import WebhookAttempts, batch_row, masked_text, messages

NOW = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)
CLIENT = "3f1c0a9b2d4e4f6a8b7c6d5e4f3a2b1c"


def test_a_message_shows_without_its_code_or_a_link_that_works() -> None:
    sent = [
        {
            "to": "+12025550101",
            "text": "Your code is 482915. It expires in 2 minutes.",
            "via": "sms",
            "at": "t1",
        },
        {
            "to": "+12025550101",
            "text": "Tap http://127.0.0.1:3000/l/AbC-12_xyZ to verify",
            "via": "sms",
            "at": "t2",
        },
        {"to": "ops@example.com", "subject": "Batch done", "text": "1234 rows", "via": "email", "at": "t3"},
    ]

    shown = messages(sent)

    # Newest first; the number it went to stays, the code and the link's token do not
    assert [message["at"] for message in shown] == ["t3", "t2", "t1"]
    assert shown[2]["text"] == "Your code is ••••••. It expires in 2 minutes."
    assert shown[1]["text"] == "Tap http://127.0.0.1:3000/l/… to verify"
    assert shown[2]["to"] == "+12025550101"
    assert shown[0]["subject"] == "Batch done"
    assert masked_text("call +12025550101 or 1234") == "call +12025550101 or ••••"


def _batch(state: BatchState, chunks: int, counts: dict[str, int]) -> Batch:
    return Batch(
        batch_id="b-1",
        key="acme/upload/file.csv",
        file_name="file.csv",
        client_name="acme",
        state=state,
        created_at=NOW,
        updated_at=NOW,
        chunks=chunks,
        counts=counts,
    )


def test_a_verifying_batch_shows_its_progress_by_chunk_and_a_delivered_one_its_row_counts() -> None:
    verifying = batch_row(_batch(BatchState.VERIFYING, 4, {"rowsRead": 1000, "valid": 990}), chunks_done=1)
    delivered = batch_row(
        _batch(
            BatchState.DELIVERED,
            4,
            {
                "rowsRead": 1000,
                "verified": 900,
                "notVerified": 80,
                "processingFailed": 0,
                "rejected:E001": 20,
                "reason:9135": 30,
                "reason:9003": 50,
            },
        ),
        chunks_done=0,
    )

    assert (verifying["progress"], verifying["done"], verifying["rows"]) == (0.25, 250, 1000)
    assert (verifying["chunksDone"], verifying["chunks"]) == (1, 4)
    assert delivered["progress"] == 1.0
    assert (delivered["rows"], delivered["done"], delivered["passed"], delivered["failed"]) == (
        1000,
        1000,
        900,
        100,
    )
    assert delivered["reasons"] == {"9135": 30, "9003": 50}


def _message(event_id: str, receive_count: int) -> dict[str, object]:
    body = {
        "eventId": event_id,
        "eventType": "SIM_SWAP",
        "phoneNumber": "+12025550142",
        "occurredAt": "2026-11-26T09:00:00Z",
        "clientId": CLIENT,
    }
    return {
        "MessageId": f"m-{event_id}-{receive_count}",
        "Body": json.dumps(body),
        "Attributes": {"ApproximateReceiveCount": str(receive_count)},
    }


def test_each_webhook_attempt_is_shown_with_its_outcome_and_next_retry() -> None:
    attempts = WebhookAttempts(
        "WebhookDeliveryFunction", lambda client: "https://hooks.example.com/phoneid", lambda: NOW
    )
    first, second = _message("e-1", 1), _message("e-1", 2)

    attempts.seen("WebhookDeliveryFunction", [first], failed={str(first["MessageId"])})
    attempts.seen("WebhookDeliveryFunction", [second], failed=set())
    attempts.seen("ConnectFunction", [_message("e-2", 1)], failed=set())  # another queue's batch

    (delivery,) = attempts.deliveries()
    assert delivery["event"] == "SIM_SWAP"
    assert delivery["endpoint"] == "https://hooks.example.com/phoneid"
    assert delivery["phone"] == "***42"
    assert delivery["outcome"] == "settled"
    assert delivery["attempts"] == [
        {
            "attempt": 1,
            "at": "2026-11-26T09:30:00+00:00",
            "outcome": "failed",
            "nextRetry": "2026-11-26T09:30:30+00:00",
        },
        {"attempt": 2, "at": "2026-11-26T09:30:00+00:00", "outcome": "settled", "nextRetry": None},
    ]
    assert "+12025550142" not in json.dumps(attempts.deliveries())
