"""The webhook signature check on the sample delivery of docs/webhooks.md, then on the same delivery
altered. A receiver passes the raw body and the request's headers, and answers 400 to a refusal.

    python clients/python/examples/webhook_check.py
"""

from __future__ import annotations

import sys

from phoneid_client import WebhookVerificationError, verify_webhook

SECRET = "whsec_vG7CCO2e50IlrHuoZj-V13Kcv6jI25_Lh5BYY_Qr5Vg"
BODY = (
    b'{"events":[{"eventId":"58a4baba-360d-4da1-b2b7-10a14830a3b8","eventType":"SIM_SWAP",'
    b'"description":"The number\'s SIM card changed.","phoneNumber":"+12025550143",'
    b'"serviceId":"72beb529-42d4-49fd-9621-f2a2e08ecbeb","clientCustomerId":"cust-1",'
    b'"occurredAt":"2026-05-01T10:00:00Z","sentAt":"2026-11-23T09:46:50Z"}]}'
)
# As a proxy may pass them on: names in any case.
HEADERS = {
    "content-type": "application/json",
    "phoneid-event-id": "58a4baba-360d-4da1-b2b7-10a14830a3b8",
    "phoneid-timestamp": "1795427210",
    "PHONEID-SIGNATURE": "v1=6e7424701a1d07b3e0dc08443e7dc3168485e6008f020562062ac8fb496d3268",
}
# The sample was signed long ago: checked as at its own time. A receiver leaves `now` out.
SIGNED_AT = 1795427210


def main() -> int:
    for event in verify_webhook(BODY, HEADERS, SECRET, now=SIGNED_AT):
        print(f"verified: {event.eventType} for {event.phoneNumber} (serviceId {event.serviceId})")
    try:
        verify_webhook(BODY.replace(b"SIM_SWAP", b"PORT"), HEADERS, SECRET, now=SIGNED_AT)
    except WebhookVerificationError as refused:
        print(f"altered delivery refused: {refused}")
    else:
        return 1
    try:
        verify_webhook(BODY, HEADERS, SECRET)
    except WebhookVerificationError as refused:
        print(f"old delivery refused: {refused}")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
