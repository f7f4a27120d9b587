"""Webhook deliveries in memory: the signature, the retry schedule, the URL rules, the payload, the
delivery service's outcomes and the registration of a client's webhook."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import astuple
from datetime import timedelta

import pytest

from phoneid.domain.signals import ChangeEvent, ChangeKind
from phoneid.domain.webhooks import (
    InvalidWebhookUrl,
    WebhookUnreachable,
    check_url,
    delivery_body,
    loggable_url,
    new_secret,
    retry_delay,
    secret_context,
    sign,
    to_message,
)
from phoneid.services.clients import ClientAdmin, InvalidClientSpec
from phoneid.services.webhooks import DeliveryFailed, Outcome, WebhookDelivery
from tests.fakes import (
    START,
    ContextCipher,
    FakeClock,
    InMemoryClientStore,
    InMemoryWebhookQueue,
    RecordingWebhookSender,
)

RECEIVER = "https://hooks.example.com/phoneid?token=receiver-token"


def event(**fields: object) -> ChangeEvent:
    values: dict[str, object] = {
        "event_id": "0f8fad5b-d9cb-469f-a165-70867728950e",
        "kind": ChangeKind.SIM_SWAP,
        "phone_number": "+12025550142",
        "occurred_at": START - timedelta(hours=2),
        "client_id": "client-a",
        "service_id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
    }
    return ChangeEvent(**{**values, **fields})  # type: ignore[arg-type]


# --- signature ------------------------------------------------------------------------------------


def test_the_signature_is_an_hmac_sha256_of_timestamp_dot_body_keyed_by_the_whole_secret() -> None:
    # Given a secret, a timestamp and a body
    secret, timestamp, body = "whsec_" + "a" * 43, 1_790_000_000, b'{"events":[]}'

    # When the body is signed
    signature = sign(secret, timestamp, body)

    # Then it is v1= and the hex HMAC-SHA256 of "<timestamp>.<body>" under the secret's UTF-8 bytes
    expected = hmac.new(secret.encode(), b'1790000000.{"events":[]}', hashlib.sha256).hexdigest()
    assert signature == f"v1={expected}"


def test_any_change_of_body_timestamp_or_secret_changes_the_signature() -> None:
    # Given one signed delivery
    secret, timestamp, body = new_secret(), 1_790_000_000, b'{"events":[1]}'
    signature = sign(secret, timestamp, body)

    # Then changing any input gives another signature
    assert sign(secret, timestamp, b'{"events":[2]}') != signature
    assert sign(secret, timestamp + 1, body) != signature
    assert sign(new_secret(), timestamp, body) != signature


def test_a_new_secret_is_whsec_and_43_base64url_characters() -> None:
    # When secrets are generated
    secrets = {new_secret() for _ in range(20)}

    # Then each has the documented form, and none repeats
    assert len(secrets) == 20
    assert all(re.fullmatch(r"whsec_[A-Za-z0-9_-]{43}", s) for s in secrets)


# --- retries --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("receive_count", "seconds"),
    [(1, 30), (2, 60), (3, 120), (4, 240), (5, 480), (6, 900), (7, 900), (50, 900), (0, 30)],
)
def test_the_backoff_doubles_from_30_seconds_and_stops_at_15_minutes(
    receive_count: int, seconds: int
) -> None:
    assert retry_delay(receive_count) == seconds


# --- URLs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/phoneid",
        "https://hooks.example.com:8443/a?b=c",
        "http://127.0.0.1:8080/hook",
        "http://localhost:3001/hook",
        "http://[::1]:9000/",
    ],
)
def test_https_urls_and_loopback_http_urls_are_accepted(url: str) -> None:
    assert check_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/phoneid",
        "ftp://hooks.example.com/",
        "https:///no-host",
        "https://user:pass@hooks.example.com/",
        "https://hooks.example.com/#fragment",
        "https://hooks.example.com:port/",
        "",
        "https://hooks.example.com/" + "a" * 2048,
    ],
)
def test_other_urls_are_refused(url: str) -> None:
    with pytest.raises(InvalidWebhookUrl):
        check_url(url)


def test_a_url_is_logged_without_its_query_string() -> None:
    assert loggable_url(RECEIVER) == "https://hooks.example.com/phoneid"


# --- payload --------------------------------------------------------------------------------------


def test_the_body_is_an_array_of_one_event_with_iso_times() -> None:
    # Given an event with a customer id
    change = event(client_customer_id="customer-7")

    # When its delivery body is made
    body = json.loads(delivery_body(change, START))

    # Then it carries the documented fields
    assert body == {
        "events": [
            {
                "eventId": change.event_id,
                "eventType": "SIM_SWAP",
                "description": "The number's SIM card changed.",
                "phoneNumber": "+12025550142",
                "serviceId": change.service_id,
                "clientCustomerId": "customer-7",
                "occurredAt": "2026-11-22T10:00:00Z",
                "sentAt": "2026-11-22T12:00:00Z",
            }
        ]
    }


def test_an_event_without_customer_id_leaves_the_field_out() -> None:
    assert "clientCustomerId" not in json.loads(delivery_body(event(), START))["events"][0]


# --- the delivery service -------------------------------------------------------------------------


def delivery(
    sender: RecordingWebhookSender, *, with_webhook: bool = True
) -> tuple[WebhookDelivery, InMemoryWebhookQueue, str]:
    clients, cipher, clock = InMemoryClientStore(), ContextCipher(), FakeClock()
    admin = ClientAdmin(clients, clock, "production", "US", cipher=cipher)
    created = admin.create(client_id="client-a")
    secret = admin.set_webhook(created.client.client_id, RECEIVER).secret if with_webhook else ""
    queue = InMemoryWebhookQueue()
    service = WebhookDelivery(clients=clients, cipher=cipher, sender=sender, queue=queue, clock=clock)
    return service, queue, secret


def test_a_2xx_answer_delivers_a_signed_event() -> None:
    # Given a client with a webhook whose receiver answers 204
    sender = RecordingWebhookSender(status=204)
    service, queue, secret = delivery(sender)

    # When a queued event is delivered
    outcome = service.deliver(to_message(event()), receipt="r1", receive_count=1)

    # Then one POST went to the URL with the event id, the timestamp and a signature of both
    assert outcome == Outcome.DELIVERED
    ((url, body, headers),) = sender.posts
    assert url == RECEIVER
    assert headers["Content-Type"] == "application/json"
    assert headers["PhoneID-Event-Id"] == event().event_id
    assert headers["PhoneID-Timestamp"] == str(int(START.timestamp()))
    assert headers["PhoneID-Signature"] == sign(secret, int(START.timestamp()), body)
    assert queue.retries == []


@pytest.mark.parametrize(("status", "count", "delay"), [(500, 1, 30), (404, 3, 120), (302, 6, 900)])
def test_any_other_answer_fails_the_item_after_asking_for_its_backoff(
    status: int, count: int, delay: int
) -> None:
    # Given a receiver that does not answer 2xx
    service, queue, _ = delivery(RecordingWebhookSender(status=status))

    # When an event received for the count-th time is delivered
    with pytest.raises(DeliveryFailed) as failed:
        service.deliver(to_message(event()), receipt="r1", receive_count=count)

    # Then the message is hidden for its backoff, and the failure names the status only
    assert queue.retries == [("r1", delay)]
    assert str(failed.value) == f"receiver answered {status}"


def test_no_answer_fails_the_item_too() -> None:
    service, queue, _ = delivery(RecordingWebhookSender(failure=WebhookUnreachable("TimeoutError")))

    with pytest.raises(DeliveryFailed, match="unreachable: TimeoutError"):
        service.deliver(to_message(event()), receipt="r1", receive_count=2)

    assert queue.retries == [("r1", 60)]


def test_a_client_without_webhook_gets_nothing_and_the_message_is_dropped() -> None:
    sender = RecordingWebhookSender()
    service, queue, _ = delivery(sender, with_webhook=False)

    assert service.deliver(to_message(event()), receipt="r1", receive_count=1) == Outcome.DROPPED
    assert sender.posts == []
    assert queue.retries == []


def test_a_malformed_message_is_retried_and_so_dead_lettered_in_the_end() -> None:
    service, queue, _ = delivery(RecordingWebhookSender())

    with pytest.raises(DeliveryFailed):
        service.deliver("not json", receipt="r1", receive_count=1)

    assert queue.retries == [("r1", 30)]


# --- registration ---------------------------------------------------------------------------------


def test_registering_returns_the_secret_once_and_stores_it_sealed_for_this_client() -> None:
    # Given a client
    clients, cipher = InMemoryClientStore(), ContextCipher()
    admin = ClientAdmin(clients, FakeClock(), "production", "US", cipher=cipher)
    client_id = admin.create().client.client_id

    # When its webhook is registered
    registered = admin.set_webhook(client_id, RECEIVER)

    # Then the secret is not stored as such, and opens only with the client's context
    stored = clients.get(client_id)
    assert stored is not None
    assert stored.webhook is not None
    assert stored.webhook.url == RECEIVER
    assert registered.secret not in repr(astuple(stored))
    assert (
        cipher.decrypt(stored.webhook.secret_sealed, secret_context(client_id)).decode() == registered.secret
    )
    with pytest.raises(ValueError, match="context"):
        cipher.decrypt(stored.webhook.secret_sealed, secret_context("client-b"))


def test_registering_again_replaces_the_secret_and_removing_stops_deliveries() -> None:
    clients, cipher = InMemoryClientStore(), ContextCipher()
    admin = ClientAdmin(clients, FakeClock(), "production", "US", cipher=cipher)
    client_id = admin.create().client.client_id

    first = admin.set_webhook(client_id, RECEIVER).secret
    second = admin.set_webhook(client_id, "https://other.example.com/hook").secret
    removed = admin.remove_webhook(client_id)

    assert first != second
    assert removed.webhook is None
    assert clients.get(client_id) == removed


def test_a_url_that_is_not_https_is_refused_with_the_reason() -> None:
    admin = ClientAdmin(InMemoryClientStore(), FakeClock(), "production", "US", cipher=ContextCipher())
    client_id = admin.create().client.client_id

    with pytest.raises(InvalidClientSpec, match="https"):
        admin.set_webhook(client_id, "http://hooks.example.com/phoneid")
