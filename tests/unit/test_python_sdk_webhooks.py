"""The Python server SDK's webhook check (phoneid_client.verify_webhook) on the delivery docs/webhooks.md
gives as a test vector, and on deliveries signed as PhoneID's webhook sender signs them."""

from __future__ import annotations

import pytest
from phoneid_client import WebhookVerificationError, verify_webhook

from phoneid.domain.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign

# docs/webhooks.md, "What a delivery looks like": exact, with this secret.
SECRET = "whsec_vG7CCO2e50IlrHuoZj-V13Kcv6jI25_Lh5BYY_Qr5Vg"
TIMESTAMP = 1795427210
BODY = (
    b'{"events":[{"eventId":"58a4baba-360d-4da1-b2b7-10a14830a3b8","eventType":"SIM_SWAP",'
    b'"description":"The number\'s SIM card changed.","phoneNumber":"+12025550143",'
    b'"serviceId":"72beb529-42d4-49fd-9621-f2a2e08ecbeb","clientCustomerId":"cust-1",'
    b'"occurredAt":"2026-05-01T10:00:00Z","sentAt":"2026-11-23T09:46:50Z"}]}'
)
HEADERS = {
    "Content-Type": "application/json",
    "PhoneID-Event-Id": "58a4baba-360d-4da1-b2b7-10a14830a3b8",
    "PhoneID-Timestamp": str(TIMESTAMP),
    "PhoneID-Signature": "v1=6e7424701a1d07b3e0dc08443e7dc3168485e6008f020562062ac8fb496d3268",
}


def test_the_documented_delivery_verifies_and_gives_its_event() -> None:
    (event,) = verify_webhook(BODY, HEADERS, SECRET, now=TIMESTAMP + 10)

    assert (event.eventType, event.phoneNumber, event.clientCustomerId) == (
        "SIM_SWAP",
        "+12025550143",
        "cust-1",
    )
    assert event.serviceId == "72beb529-42d4-49fd-9621-f2a2e08ecbeb"


@pytest.mark.parametrize("case", [str.lower, str.upper, str.title], ids=["lower", "upper", "title"])
def test_header_names_match_in_any_case(case: object) -> None:
    assert callable(case)
    headers = {case(name): value for name, value in HEADERS.items()}

    assert len(verify_webhook(BODY, headers, SECRET, now=TIMESTAMP)) == 1


def test_a_delivery_signed_by_phoneids_sender_verifies() -> None:
    now = TIMESTAMP + 3600
    headers = {TIMESTAMP_HEADER: str(now), SIGNATURE_HEADER: sign(SECRET, now, BODY)}

    assert len(verify_webhook(BODY, headers, SECRET, now=now)) == 1


@pytest.mark.parametrize(
    ("body", "headers", "secret"),
    [
        (BODY.replace(b"+12025550143", b"+12025550144"), HEADERS, SECRET),
        (BODY, {**HEADERS, "PhoneID-Timestamp": str(TIMESTAMP + 1)}, SECRET),
        (BODY, {**HEADERS, "PhoneID-Signature": HEADERS["PhoneID-Signature"].upper()}, SECRET),
        (BODY, HEADERS, SECRET[:-1] + "x"),
        (BODY, {k: v for k, v in HEADERS.items() if k != "PhoneID-Signature"}, SECRET),
        (BODY, {k: v for k, v in HEADERS.items() if k != "PhoneID-Timestamp"}, SECRET),
    ],
    ids=["tampered body", "other timestamp", "altered signature", "other secret", "unsigned", "no timestamp"],
)
def test_a_tampered_or_unsigned_delivery_is_refused(
    body: bytes, headers: dict[str, str], secret: str
) -> None:
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, headers, secret, now=TIMESTAMP)


@pytest.mark.parametrize("age", [301, -301, 86400])
def test_a_delivery_signed_more_than_five_minutes_from_now_is_refused(age: int) -> None:
    with pytest.raises(WebhookVerificationError, match="300 s"):
        verify_webhook(BODY, HEADERS, SECRET, now=TIMESTAMP + age)


def test_the_tolerance_is_the_receivers_choice() -> None:
    assert len(verify_webhook(BODY, HEADERS, SECRET, now=TIMESTAMP + 600, tolerance=600)) == 1
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, HEADERS, SECRET, now=TIMESTAMP + 61, tolerance=60)


def test_the_refusal_is_a_value_error_and_names_no_secret() -> None:
    with pytest.raises(ValueError, match="signature") as raised:
        verify_webhook(BODY, HEADERS, "whsec_another", now=TIMESTAMP)

    assert "whsec_" not in str(raised.value)
