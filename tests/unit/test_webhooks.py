"""Webhook deliveries in memory: the signature, the retry schedule, the URL rules, the payload, the
delivery service's outcomes and the registration of a client's webhook."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import astuple
from datetime import timedelta
from typing import Any

import pytest

import phoneid
from phoneid.adapters.webhook_http import HttpWebhookSender
from phoneid.domain.signals import ChangeEvent, ChangeKind
from phoneid.domain.webhooks import (
    InvalidWebhookUrl,
    WebhookRefused,
    WebhookUnreachable,
    address_refusal,
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

# Each would make PhoneID's network send a request where a client should not reach: instance
# metadata, the VPC, the function's own Lambda Runtime API (localhost:9001), a header injection.
HOSTILE_URLS = [
    pytest.param("https://169.254.169.254/latest/meta-data/iam/", "metadata address", id="aws-metadata"),
    pytest.param("https://[fd00:ec2::254]/latest/", "metadata address", id="aws-metadata-ipv6"),
    pytest.param("https://10.0.0.5/hook", "private address", id="rfc1918-10"),
    pytest.param("https://172.16.4.2/", "private address", id="rfc1918-172"),
    pytest.param("https://192.168.1.1/", "private address", id="rfc1918-192"),
    pytest.param("https://[fd12:3456::1]/", "unique local", id="ipv6-unique-local"),
    pytest.param("https://metadata.google.internal/computeMetadata/v1/", ".internal", id="gcp-metadata"),
    pytest.param("https://instance-data.ec2.internal/", ".internal", id="aws-metadata-name"),
    pytest.param("https://metadata/", "not a public host name", id="single-label-metadata"),
    pytest.param("https://instance-data/latest/", "not a public host name", id="single-label-instance-data"),
    pytest.param("http://localhost:9001/2018-06-01/runtime/invocation/next", "loopback", id="lambda-runtime"),
    pytest.param("https://localhost:9001/", "loopback", id="localhost-https"),
    pytest.param("https://api.localhost/", "loopback", id="sub-localhost"),
    pytest.param("https://127.0.0.1/", "loopback", id="loopback-v4"),
    pytest.param("https://127.8.9.10/", "loopback", id="loopback-v4-range"),
    pytest.param("https://[::1]/", "loopback", id="loopback-v6"),
    pytest.param("https://169.254.10.1/", "link-local", id="link-local-v4"),
    pytest.param("https://[fe80::1]/", "link-local", id="link-local-v6"),
    pytest.param("https://100.64.0.1/", "carrier-grade NAT", id="cgnat"),
    pytest.param("https://0.0.0.0/", "unspecified", id="unspecified-v4"),
    pytest.param("https://[::]/", "unspecified", id="unspecified-v6"),
    pytest.param("https://224.0.0.251/", "multicast", id="multicast-v4"),
    pytest.param("https://[ff02::1]/", "multicast", id="multicast-v6"),
    pytest.param("https://240.0.0.1/", "reserved", id="reserved-v4"),
    pytest.param("https://255.255.255.255/", "reserved", id="broadcast"),
    pytest.param("https://198.18.0.1/", "benchmarking", id="benchmarking"),
    pytest.param("https://192.0.2.10/", "documentation", id="documentation"),
    pytest.param("https://[::ffff:169.254.169.254]/", "metadata address, in an IPv6 form", id="ipv4-mapped"),
    pytest.param(
        "https://[::ffff:a00:5]/", "private address (RFC 1918), in an IPv6 form", id="ipv4-mapped-hex"
    ),
    pytest.param("https://[64:ff9b::a9fe:a9fe]/", "metadata address, in an IPv6 form", id="nat64"),
    pytest.param("https://[2002:a00:5::1]/", "private address (RFC 1918), in an IPv6 form", id="6to4"),
    pytest.param("https://[::127.0.0.1]/", "reserved", id="ipv4-compatible"),
    pytest.param("http://2852039166/", "four decimal numbers", id="decimal-ipv4"),
    pytest.param("https://0xa9fea9fe/", "four decimal numbers", id="hex-ipv4"),
    pytest.param("https://0x7f.1/", "four decimal numbers", id="hex-short-ipv4"),
    pytest.param("https://0251.0376.0251.0376/", "four decimal numbers", id="octal-ipv4"),
    pytest.param("https://127.1/", "four decimal numbers", id="short-ipv4"),
    pytest.param("https://hooks.example.com/a\r\nX-Injected: 1", "spaces or control characters", id="crlf"),
    pytest.param("https://hooks.example.com/a b", "spaces or control characters", id="space"),
    pytest.param("https://hooks.example.com/a\tb", "spaces or control characters", id="tab"),
    pytest.param(" https://hooks.example.com/", "spaces or control characters", id="leading-space"),
    pytest.param("https://hooks.example.com/\x00", "spaces or control characters", id="nul"),
    pytest.param("https://hooks.example.com/\u2028", "spaces or control characters", id="line-separator"),
    pytest.param("https://hooks.éxample.com/", "ASCII", id="non-ascii-host"),
    pytest.param("https://user:pass@hooks.example.com/", "credentials", id="userinfo"),
    pytest.param("https://hooks.example.com@10.0.0.5/", "credentials", id="userinfo-hiding-host"),
    pytest.param("https://hooks.example.com\\@10.0.0.5/", "credentials", id="backslash-userinfo"),
    pytest.param("https://[fe80::1%25eth0]/", "host name or an IP address", id="ipv6-zone"),
    pytest.param("https://hooks.example.com./", "ends with a dot", id="trailing-dot"),
    pytest.param("https://hooks_1.example.com/", "host name or an IP address", id="underscore"),
    pytest.param("https://-hooks.example.com/", "not a host name", id="label-hyphen"),
    pytest.param("https://hooks.example.test/", "private network (.test)", id="special-use-tld"),
    pytest.param("http://hooks.example.com/phoneid", "https", id="plain-http"),
    pytest.param("ftp://hooks.example.com/", "https://host", id="ftp"),
    pytest.param("https:///no-host", "https://host", id="no-host"),
    pytest.param("https://hooks.example.com/#fragment", "fragment", id="fragment"),
    pytest.param("https://hooks.example.com:port/", "port", id="port-not-a-number"),
    pytest.param("https://hooks.example.com:0/", "port", id="port-zero"),
    pytest.param("https://hooks.example.com:65536/", "port", id="port-too-big"),
    pytest.param("", "characters", id="empty"),
    pytest.param("https://hooks.example.com/" + "a" * 2048, "characters", id="too-long"),
]

GOOD_URLS = [
    "https://hooks.example.com/phoneid",
    "https://hooks.example.com:8443/a?b=c",
    "https://HOOKS.example.com/Upper/Case?Token=x%20y",
    "https://xn--bcher-kva.com/hook",
    "https://93.184.216.34/hook",
    "https://[2606:2800:220:1:248:1893:25c8:1946]:8443/",
    "https://[::ffff:93.184.216.34]/",
]

LOOPBACK_URLS = [
    "http://127.0.0.1:8080/hook",
    "http://localhost:3001/hook",
    "http://[::1]:9000/",
    "https://localhost/hook",
    "http://receiver.localhost:8080/",
]


@pytest.mark.parametrize("url", GOOD_URLS)
def test_https_urls_of_public_hosts_are_accepted(url: str) -> None:
    assert check_url(url) == url
    assert check_url(url, allow_loopback=True) == url


@pytest.mark.parametrize(("url", "reason"), HOSTILE_URLS)
def test_urls_to_non_public_hosts_or_badly_formed_are_refused_with_the_reason(url: str, reason: str) -> None:
    with pytest.raises(InvalidWebhookUrl, match=re.escape(reason)):
        check_url(url)


@pytest.mark.parametrize("url", LOOPBACK_URLS)
def test_loopback_receivers_are_accepted_on_the_local_stack_only(url: str) -> None:
    assert check_url(url, allow_loopback=True) == url
    with pytest.raises(InvalidWebhookUrl, match="loopback"):
        check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5/",
        "https://169.254.169.254/",
        "http://hooks.example.com/",
        "https://metadata.google.internal/",
        "http://2130706433/",  # 127.0.0.1 spelled as one number
    ],
)
def test_the_local_stack_allows_loopback_and_nothing_else_that_is_refused(url: str) -> None:
    with pytest.raises(InvalidWebhookUrl):
        check_url(url, allow_loopback=True)


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("::ffff:93.184.216.34", True),
        ("64:ff9b::5db8:d822", True),  # NAT64 of 93.184.216.34
        ("10.0.0.5", False),
        ("169.254.169.254", False),
        ("fd00:ec2::254", False),
        ("fe80::1%eth0", False),
        ("::ffff:10.0.0.5", False),
        ("100.100.100.200", False),  # a cloud's metadata service, in carrier-grade NAT space
        ("127.0.0.53", False),
        ("4000::1", False),  # outside global unicast
        ("not-an-address", False),
    ],
)
def test_a_resolved_address_is_checked_against_the_same_ranges(address: str, allowed: bool) -> None:
    assert (address_refusal(address) is None) is allowed


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
    assert headers["User-Agent"] == f"PhoneID-Webhooks/{phoneid.__version__}"
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


@pytest.mark.parametrize(("url", "reason"), HOSTILE_URLS)
@pytest.mark.parametrize("tier", ["production", "sandbox"])
def test_a_hostile_url_is_refused_at_registration_and_nothing_is_stored(
    url: str, reason: str, tier: str
) -> None:
    # Given a client without a webhook on a deployed stack of either tier
    clients = InMemoryClientStore()
    admin = ClientAdmin(clients, FakeClock(), tier, "US", cipher=ContextCipher())  # type: ignore[arg-type]
    client_id = admin.create().client.client_id

    # When the operator registers the URL, then it is refused with the rule it breaks
    with pytest.raises(InvalidClientSpec, match=re.escape(reason)):
        admin.set_webhook(client_id, url)

    # And the client still has no webhook
    stored = clients.get(client_id)
    assert stored is not None
    assert stored.webhook is None


@pytest.mark.parametrize("url", GOOD_URLS)
def test_an_https_url_of_a_public_host_is_registered(url: str) -> None:
    clients = InMemoryClientStore()
    admin = ClientAdmin(clients, FakeClock(), "production", "US", cipher=ContextCipher())
    client_id = admin.create().client.client_id

    registered = admin.set_webhook(client_id, url)

    assert registered.client.webhook is not None
    assert registered.client.webhook.url == url


@pytest.mark.parametrize("url", LOOPBACK_URLS)
def test_the_local_stack_registers_a_loopback_receiver_and_a_deployed_stack_does_not(url: str) -> None:
    # Given the local stack's admin and a deployed stack's
    local = ClientAdmin(
        InMemoryClientStore(), FakeClock(), "production", "US", cipher=ContextCipher(), loopback_webhooks=True
    )
    deployed = ClientAdmin(InMemoryClientStore(), FakeClock(), "production", "US", cipher=ContextCipher())

    # Then only the local stack takes a receiver on this machine
    registered = local.set_webhook(local.create().client.client_id, url).client.webhook
    assert registered is not None
    assert registered.url == url
    with pytest.raises(InvalidClientSpec, match="loopback"):
        deployed.set_webhook(deployed.create().client.client_id, url)


# --- delivery: the sender's checks, before any connection ---------------------------------------


class MappedResolver:
    """A DNS of names to fixed addresses; counts the lookups."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.lookups: list[str] = []

    def addresses(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host not in self.answers:
            raise OSError("no such name")
        return self.answers[host]


class NoConnection:
    """A connect function that records what would have been connected to, and connects nowhere."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    def __call__(self, address: tuple[str, int], timeout: float) -> Any:
        self.attempts.append(address)
        raise ConnectionRefusedError("not in a unit test")


@pytest.mark.parametrize(
    ("answers", "reason"),
    [
        (["10.0.0.5"], "private address (RFC 1918) (10.0.0.5)"),
        (["169.254.169.254"], "metadata address (169.254.169.254)"),
        (["127.0.0.1"], "loopback address (127.0.0.1)"),
        (["fd00:ec2::254"], "metadata address (fd00:ec2::254)"),
        (["::ffff:192.168.0.7"], "private address (RFC 1918), in an IPv6 form (::ffff:192.168.0.7)"),
        (["93.184.216.34", "10.0.0.5"], "private address (RFC 1918) (10.0.0.5)"),  # one bad answer is enough
    ],
)
def test_a_name_resolving_to_a_non_public_address_is_refused_without_connecting(
    answers: list[str], reason: str
) -> None:
    # Given a public-looking name whose DNS answers a private address
    resolver, connect = MappedResolver({"hooks.example.com": answers}), NoConnection()
    sender = HttpWebhookSender(resolver=resolver, connect=connect)

    # When a delivery is posted to it, then it is refused, naming the address, and nothing connected
    with pytest.raises(WebhookRefused, match=re.escape(reason)):
        sender.post("https://hooks.example.com/phoneid", b"{}", {})
    assert resolver.lookups == ["hooks.example.com"]
    assert connect.attempts == []


def test_a_url_stored_before_the_rules_is_refused_at_delivery_without_a_lookup() -> None:
    resolver, connect = MappedResolver({}), NoConnection()
    sender = HttpWebhookSender(resolver=resolver, connect=connect)

    with pytest.raises(WebhookRefused, match="metadata address"):
        sender.post("https://169.254.169.254/latest/meta-data/", b"{}", {})
    with pytest.raises(WebhookRefused, match="four decimal numbers"):
        sender.post("http://2852039166/", b"{}", {})
    assert resolver.lookups == []
    assert connect.attempts == []


def test_a_loopback_answer_is_delivered_to_on_the_local_stack_only() -> None:
    resolver = MappedResolver({"receiver.localhost": ["127.0.0.1"], "hooks.example.com": ["127.0.0.1"]})
    attempts = NoConnection()
    local = HttpWebhookSender(resolver=resolver, allow_loopback=True, connect=attempts)

    # On the local stack the sender goes on to connect (here: refused, so unreachable, not refused)
    with pytest.raises(WebhookUnreachable, match="ConnectionRefusedError"):
        local.post("http://receiver.localhost:8080/hook", b"{}", {})
    assert attempts.attempts == [("127.0.0.1", 8080)]

    # A deployed stack refuses the same answer before connecting
    nothing = NoConnection()
    deployed = HttpWebhookSender(resolver=resolver, connect=nothing)
    with pytest.raises(WebhookRefused, match="loopback address"):
        deployed.post("https://hooks.example.com/hook", b"{}", {})
    assert nothing.attempts == []


def test_a_name_that_does_not_resolve_is_unreachable() -> None:
    sender = HttpWebhookSender(resolver=MappedResolver({}), connect=NoConnection())

    with pytest.raises(WebhookUnreachable, match="name not resolved"):
        sender.post("https://gone.example.com/", b"{}", {})


def test_a_refused_delivery_is_a_failed_attempt_retried_with_its_reason_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given a receiver whose name now resolves to a private address
    refusal = WebhookRefused("the host resolves to a private address (RFC 1918) (10.0.0.5)")
    service, queue, secret = delivery(RecordingWebhookSender(failure=refusal))

    # When its event is delivered
    with caplog.at_level("WARNING"), pytest.raises(DeliveryFailed) as failed:
        service.deliver(to_message(event()), receipt="r1", receive_count=2)

    # Then it failed with the reason, is retried on the usual schedule, and the log says why
    assert str(failed.value) == "refused: the host resolves to a private address (RFC 1918) (10.0.0.5)"
    assert queue.retries == [("r1", 60)]
    (record,) = [r for r in caplog.records if r.getMessage() == "change event delivery failed"]
    assert record.failure == str(failed.value)  # type: ignore[attr-defined]
    assert record.receiver == "https://hooks.example.com/phoneid"  # type: ignore[attr-defined]
    logged = " ".join(str(value) for value in vars(record).values())
    assert secret not in logged
    assert "receiver-token" not in logged
