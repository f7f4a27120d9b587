"""Change-event webhooks on moto: identities enrolled through the API, monitor passes run by the
scheduled handler against a fake CAMARA operator, and deliveries run by the SQS handler to a receiver
on loopback that checks every signature the way docs/webhooks.md tells integrators to.

The SQS event source mapping is driven here: receive, invoke the delivery handler with the SQS event,
delete what it did not report failed. moto keeps visibility timeouts in real time, so instead of
waiting out a backoff the test makes the message visible again with ChangeMessageVisibility(0).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest

from phoneid import bootstrap
from phoneid.domain.signals import ChangeKind, ListEntry, ListKind
from phoneid.domain.webhooks import Webhook, secret_context
from phoneid_cli.main import main
from phoneid_dev import workflows
from phoneid_dev.console_page.panels import WebhookAttempts
from phoneid_dev.events import function_context
from phoneid_dev.operator import FakeOperator
from phoneid_dev.triggers import queue_sources, sqs_event
from tests.fakes import FakeClock
from tests.harness import Api, Integrator, LogRecorder

_numbers = itertools.count(3000)
TOLERANCE_SECONDS = 300  # what docs/webhooks.md suggests receivers accept


def new_number() -> str:
    return f"+1202555{next(_numbers):04d}"


# --- a receiver, written from the docs (it does not import PhoneID's signing code) ---------------


@dataclass
class Receiver:
    """Verifies PhoneID-Signature over "<timestamp>.<body>" with the secret, rejects stale timestamps,
    and de-duplicates on PhoneID-Event-Id. ``answers`` are the statuses to give, in order, then 200."""

    clock: FakeClock
    secret: str = ""
    answers: list[int] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)  # every verified POST
    events: dict[str, dict[str, Any]] = field(default_factory=dict)  # processed once, by event id
    rejected: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def verified(self, headers: Any, body: bytes) -> bool:
        timestamp = headers.get("PhoneID-Timestamp", "")
        signature = headers.get("PhoneID-Signature", "")
        expected = hmac.new(
            self.secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256
        ).hexdigest()
        fresh = (
            timestamp.isdigit() and abs(self.clock.now().timestamp() - int(timestamp)) <= TOLERANCE_SECONDS
        )
        return fresh and hmac.compare_digest(signature, f"v1={expected}")

    def receive(self, headers: Any, body: bytes) -> int:
        with self._lock:
            if headers.get("Content-Type") != "application/json" or not self.verified(headers, body):
                self.rejected += 1
                return 400
            payload = json.loads(body)
            event_id = headers["PhoneID-Event-Id"]
            timestamp = headers["PhoneID-Timestamp"]  # header names are case-insensitive
            self.attempts.append({"eventId": event_id, "timestamp": timestamp, "payload": payload})
            status = self.answers.pop(0) if self.answers else 200
            if 200 <= status < 300:
                for event in payload["events"]:
                    self.events.setdefault(event_id, event)  # a redelivery changes nothing
            return status


@pytest.fixture
def receiver(clock: FakeClock) -> Iterator[tuple[Receiver, str]]:
    state = Receiver(clock)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            return

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status = state.receive(self.headers, body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    # The query string stands for a receiver's own token: it must never be logged.
    yield state, f"http://127.0.0.1:{server.server_address[1]}/phoneid-events?token=receiver-token"
    server.shutdown()
    server.server_close()


# --- the stack's scheduled and queued functions, driven by the test ------------------------------


class Webhooks:
    """The monitor schedule and the delivery queue's event source mapping, one step at a time."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.sqs: Any = boto3.client("sqs")
        (self.source,) = queue_sources(api.stack.template)
        self.queue = api.stack.physical_ids[self.source.queue]
        self.dead_letters = api.stack.physical_ids["WebhookDeadLetterQueue"]
        self.in_flight: dict[str, str] = {}  # failed message id -> receipt handle
        self.backoffs: list[int] = []  # every visibility timeout the delivery handler set
        api.container.sqs.meta.events.register(
            "provide-client-params.sqs.ChangeMessageVisibility",
            lambda params, **_: self.backoffs.append(params["VisibilityTimeout"]),
        )

    def monitor_pass(self) -> dict[str, Any]:
        """One pass through the monitor's workflow, as the schedule starts it; its summary."""
        machine = self.api.stack.physical_ids["MonitorStateMachine"]
        execution = workflows.run(machine, {"passId": self.api.clock.now().isoformat()})
        assert execution["status"] == "SUCCEEDED", execution.get("error")
        report: dict[str, Any] = json.loads(execution["output"])
        return report

    def deliver(self) -> tuple[int, int]:
        """One batch as Lambda's event source mapping runs it: (received, failed)."""
        messages = self.sqs.receive_message(
            QueueUrl=self.queue, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            return 0, 0
        arn = self.api.stack.attributes[(self.source.queue, "Arn")]
        result = self.api.stack.invoke(
            self.source.function,
            sqs_event(messages, arn, self.api.stack.aws_region),
            function_context(self.api.stack.template, self.source.function),
        )
        failed = {item["itemIdentifier"] for item in result["batchItemFailures"]}
        for message in messages:
            if message["MessageId"] in failed:
                self.in_flight[message["MessageId"]] = message["ReceiptHandle"]
            else:
                self.sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=message["ReceiptHandle"])
        return len(messages), len(failed)

    def retry_now(self) -> None:
        """The backoff, without waiting: every failed message visible again."""
        for receipt in self.in_flight.values():
            self.sqs.change_message_visibility(
                QueueUrl=self.queue, ReceiptHandle=receipt, VisibilityTimeout=0
            )
        self.in_flight.clear()

    def queued(self, queue: str) -> list[dict[str, Any]]:
        """The messages of ``queue``, looked at and left in place."""
        messages: list[dict[str, Any]] = self.sqs.receive_message(
            QueueUrl=queue, MaxNumberOfMessages=10, VisibilityTimeout=0, MessageSystemAttributeNames=["All"]
        ).get("Messages", [])
        return messages


@dataclass
class Setup:
    api: Api
    webhooks: Webhooks
    integrator: Integrator
    receiver: Receiver
    url: str

    def enroll(self, phone: str, **fields: Any) -> str:
        answer = self.integrator.post("/v3/identity", {"phoneNumber": phone, **fields})
        assert answer.status == 200, answer.body
        return str(answer.json()["serviceId"])

    def deactivate(self, service_id: str) -> None:
        answer = self.integrator.post(f"/v3/identity/{service_id}/deactivate", {})
        assert answer.status == 200, answer.body


@pytest.fixture
def production(make_api: Callable[..., Api], operator: FakeOperator, receiver: tuple[Receiver, str]) -> Setup:
    """A production stack on the fake operator, and a client whose webhook is the receiver."""
    api = make_api(tier="production", operator=operator)
    integrator = api.integrator()
    state, url = receiver
    state.secret = api.container.client_admin.set_webhook(integrator.client_id, url).secret
    return Setup(api, Webhooks(api), integrator, state, url)


# --- tests ----------------------------------------------------------------------------------------


def test_a_new_sim_change_reaches_the_webhook_once_per_active_identity_signed(
    production: Setup, operator: FakeOperator, clock: FakeClock
) -> None:
    # Given two active identities and an inactive one, enrolled through the API
    alice_phone, bob_phone, carol_phone = new_number(), new_number(), new_number()
    alice = production.enroll(alice_phone, clientCustomerId="customer-alice")
    bob = production.enroll(bob_phone)
    carol = production.enroll(carol_phone)
    production.deactivate(carol)

    # When the first pass runs
    first = production.webhooks.monitor_pass()

    # Then it records the baseline of the active ones and sends nothing
    assert (first["checked"], first["events"]) == (2, 0)
    assert production.webhooks.deliver() == (0, 0)

    # When every number's SIM changes and the next pass runs, then the queue is delivered
    clock.advance(hours=1)
    swapped = clock.now() - timedelta(minutes=20)
    for phone in (alice_phone, bob_phone, carol_phone):
        operator.script(phone, latestSimChange=swapped)
    second = production.webhooks.monitor_pass()
    delivered = production.webhooks.deliver()

    # Then each active identity got one SIM_SWAP, verified by the receiver; the inactive one none
    assert (second["checked"], second["events"]) == (2, 2)
    assert delivered == (2, 0)
    assert production.receiver.rejected == 0
    events = production.receiver.events
    assert {e["serviceId"]: e["eventType"] for e in events.values()} == {alice: "SIM_SWAP", bob: "SIM_SWAP"}
    by_service = {e["serviceId"]: e for e in events.values()}
    assert by_service[alice] == {
        "eventId": by_service[alice]["eventId"],
        "eventType": "SIM_SWAP",
        "description": "The number's SIM card changed.",
        "phoneNumber": alice_phone,
        "serviceId": alice,
        "clientCustomerId": "customer-alice",
        "occurredAt": swapped.isoformat().replace("+00:00", "Z"),
        "sentAt": clock.now().isoformat().replace("+00:00", "Z"),
    }
    assert "clientCustomerId" not in by_service[bob]
    assert set(events) == {e["eventId"] for e in events.values()}

    # And the fraud policy's change-event log holds them; a third pass finds nothing new
    logged = production.api.container.change_events.since(production.integrator.client_id, bob_phone, swapped)
    assert [e.kind for e in logged] == [ChangeKind.SIM_SWAP]
    clock.advance(hours=1)
    assert production.webhooks.monitor_pass()["events"] == 0


def test_a_failing_receiver_gets_six_attempts_with_growing_backoff_then_the_dead_letter_queue(
    production: Setup, operator: FakeOperator, clock: FakeClock
) -> None:
    # Given a baseline, a receiver that answers 500, and a number that becomes unreachable
    phone = new_number()
    production.enroll(phone)
    production.webhooks.monitor_pass()
    production.receiver.answers = [500] * 10
    operator.script(phone, reachable=False)
    clock.advance(hours=1)
    assert production.webhooks.monitor_pass()["events"] == 1

    # When SQS offers the message again after each failure, until it stops offering it
    offered = 0
    while production.webhooks.deliver() == (1, 1):
        offered += 1
        clock.advance(minutes=1)
        production.webhooks.retry_now()

    # Then the receiver saw six attempts of one event, each failure waited longer, capped at 15 min
    attempts = production.receiver.attempts
    assert offered == 6
    assert len(attempts) == 6
    assert len({a["eventId"] for a in attempts}) == 1
    assert len({a["timestamp"] for a in attempts}) == 6  # signed anew each time
    assert production.webhooks.backoffs[:6] == [30, 60, 120, 240, 480, 900]
    assert production.receiver.events == {}

    # And the message is in the dead-letter queue, unchanged
    (dead,) = production.webhooks.queued(production.webhooks.dead_letters)
    assert json.loads(dead["Body"])["eventId"] == attempts[0]["eventId"]
    assert json.loads(dead["Body"])["eventType"] == "DISCONNECT"
    assert production.webhooks.queued(production.webhooks.queue) == []


def test_a_redelivered_event_keeps_its_event_id_so_the_receiver_processes_it_once(
    production: Setup, operator: FakeOperator, clock: FakeClock
) -> None:
    # Given a receiver that processes an event but answers 500 (as when its answer is lost)
    phone = new_number()
    production.enroll(phone)
    production.webhooks.monitor_pass()
    operator.script(phone, roamingCountry="MX")
    clock.advance(hours=1)
    production.webhooks.monitor_pass()

    # When the first attempt fails for PhoneID and the message is delivered again
    production.receiver.answers = [500]
    assert production.webhooks.deliver() == (1, 1)
    clock.advance(seconds=30)
    production.webhooks.retry_now()
    assert production.webhooks.deliver() == (1, 0)

    # Then both attempts carried the same event id, and the receiver kept one event
    first, second = production.receiver.attempts
    assert first["eventId"] == second["eventId"]
    assert first["payload"]["events"][0]["eventId"] == first["eventId"]
    assert list(production.receiver.events) == [first["eventId"]]
    assert production.receiver.events[first["eventId"]]["eventType"] == "MOVED_OUT_OF_COVERAGE"


def test_a_client_without_webhook_gets_no_delivery_but_its_events_are_recorded(
    make_api: Callable[..., Api], operator: FakeOperator, clock: FakeClock
) -> None:
    # Given an identity of a client that registered no webhook, after a baseline
    api = make_api(tier="production", operator=operator)
    integrator = api.integrator()
    webhooks = Webhooks(api)
    phone = new_number()
    assert integrator.post("/v3/identity", {"phoneNumber": phone}).status == 200
    webhooks.monitor_pass()

    # When its number changes subscriber
    operator.script(phone, subscriberChangedAt=(clock.now() + timedelta(days=1)).date())
    clock.advance(days=2)
    report = webhooks.monitor_pass()

    # Then the change is recorded for the fraud policy, and nothing is queued
    assert report["events"] == 1
    assert webhooks.queued(webhooks.queue) == []
    logged = api.container.change_events.since(integrator.client_id, phone, clock.now() - timedelta(days=3))
    assert [e.kind for e in logged] == [ChangeKind.PHONE_NUMBER_CHANGE]


def test_a_sandbox_stack_monitors_the_operators_lists_and_the_local_poller_delivers(
    make_api: Callable[..., Api], receiver: tuple[Receiver, str], clock: FakeClock
) -> None:
    from phoneid_dev.triggers import pollers

    # Given a Sandbox stack (no carrier) with a webhook and an identity's baseline
    api = make_api()
    integrator = api.integrator()
    state, url = receiver
    state.secret = api.container.client_admin.set_webhook(integrator.client_id, url).secret
    webhooks = Webhooks(api)
    phone = new_number()
    service_id = integrator.post("/v3/identity", {"phoneNumber": phone}).json()["serviceId"]
    webhooks.monitor_pass()

    # When the operator's port-events list says the number was ported, and a pass runs
    ported = clock.now() - timedelta(hours=2)
    api.container.signal_lists.put_many(
        [ListEntry(ListKind.PORT_EVENTS, phone, {"portedAt": ported.isoformat()})]
    )
    clock.advance(hours=1)
    report = webhooks.monitor_pass()
    (poller,) = pollers(api.stack)
    console = WebhookAttempts(poller.source.function, lambda client: url, clock.now)
    poller.observers.append(console.seen)
    polled = poller.drain()

    # Then the local stack's poller delivered one PORT event, dated when the port happened
    assert report["events"] == 1
    assert (polled.received, polled.failed) == (1, 0)
    (event,) = state.events.values()
    assert (event["eventType"], event["serviceId"]) == ("PORT", service_id)
    assert event["occurredAt"] == ported.isoformat().replace("+00:00", "Z")
    # And the local stack's console saw that one attempt settle
    (delivery,) = console.deliveries()
    assert (delivery["event"], delivery["clientId"], delivery["endpoint"]) == (
        "PORT",
        integrator.client_id,
        url,
    )
    assert [(a["attempt"], a["outcome"], a["nextRetry"]) for a in delivery["attempts"]] == [
        (1, "settled", None)
    ]


def test_monitor_and_delivery_never_log_numbers_secrets_or_the_receivers_query(
    production: Setup, operator: FakeOperator, clock: FakeClock, logged: LogRecorder
) -> None:
    # Given a change delivered to a receiver that fails once, then succeeds
    phone = new_number()
    production.enroll(phone)
    production.webhooks.monitor_pass()
    operator.script(phone, latestSimChange=clock.now())
    clock.advance(hours=1)
    production.webhooks.monitor_pass()
    production.receiver.answers = [503]
    production.webhooks.deliver()
    production.webhooks.retry_now()
    production.webhooks.deliver()

    # Then the logs name the event, but not the number, the secret or the URL's query string
    written = "\n".join(logged.lines)
    assert len(production.receiver.events) == 1
    assert next(iter(production.receiver.events)) in written
    assert phone not in written
    assert phone[1:] not in written
    assert production.receiver.secret not in written
    assert "receiver-token" not in written


def test_the_cli_registers_a_webhook_lists_its_url_and_the_failed_events(
    production: Setup, operator: FakeOperator, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an event whose every delivery failed
    phone = new_number()
    production.enroll(phone)
    production.webhooks.monitor_pass()
    production.receiver.answers = [500] * 6
    operator.script(phone, latestSimChange=clock.now())
    clock.advance(hours=1)
    production.webhooks.monitor_pass()
    while production.webhooks.deliver() == (1, 1):
        production.webhooks.retry_now()
    client_id = production.integrator.client_id
    capsys.readouterr()

    # When the operator lists the failed events (twice: listing removes nothing)
    assert main(["webhooks", "failed", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert main(["webhooks", "failed", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)

    # Then each shows the event, its type, a masked number and the client
    (failed,) = listed
    assert [row["eventId"] for row in again] == [failed["eventId"]]
    assert failed["eventType"] == "SIM_SWAP"
    assert failed["clientId"] == client_id
    assert failed["phoneNumber"] == f"***{phone[-2:]}"
    assert failed["eventId"] == production.receiver.attempts[0]["eventId"]

    # When the receiver is fixed and the operator redrives them
    assert main(["webhooks", "redrive"]) == 0
    bootstrap.override(clock=clock)  # the command started a container of its own
    assert production.webhooks.deliver() == (1, 0)

    # Then the event arrives with its original id
    assert list(production.receiver.events) == [failed["eventId"]]

    # When the webhook is registered again from the command line, and the clients listed
    capsys.readouterr()
    assert main(["clients", "update", client_id, "--webhook", "https://hooks.example.com/in", "--json"]) == 0
    registered = json.loads(capsys.readouterr().out)
    assert main(["clients", "list", "--json"]) == 0
    clients = capsys.readouterr().out

    # Then a new secret is printed once; the list shows the URL and never the secret
    assert registered["webhook"] == "https://hooks.example.com/in"
    assert registered["webhook_secret"].startswith("whsec_")
    assert "https://hooks.example.com/in" in clients
    assert registered["webhook_secret"] not in clients
    assert main(["clients", "update", client_id, "--webhook", "http://hooks.example.com/in"]) == 2
    assert main(["clients", "update", client_id, "--no-webhook"]) == 0


def test_a_deployed_stack_refuses_loopback_and_metadata_webhooks_at_registration_and_at_delivery(
    make_api: Callable[..., Api],
    operator: FakeOperator,
    receiver: tuple[Receiver, str],
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    logged: LogRecorder,
) -> None:
    # Given a production stack that is not the local one (as on AWS: the template never says local)
    api = make_api(tier="production", operator=operator)
    assert api.container.settings.local_stack  # what the local stack (and these tests) run as
    monkeypatch.delenv("PHONEID_LOCAL_STACK")
    bootstrap.reset()
    bootstrap.override(clock=clock)
    integrator = api.integrator()
    client_id = integrator.client_id
    state, url = receiver

    # When the operator registers a receiver on loopback, or the metadata address, from the command line
    refused = {}
    for hostile in (url, "https://169.254.169.254/latest/meta-data/", "https://metadata.google.internal/"):
        refused[hostile] = (
            main(["clients", "update", client_id, "--webhook", hostile]),
            capsys.readouterr().err,
        )

    # Then each is refused with the reason, and nothing is registered
    assert refused[url][0] == 2
    assert "127.0.0.1 is a loopback address" in refused[url][1]
    assert refused["https://169.254.169.254/latest/meta-data/"][0] == 2
    assert "metadata address" in refused["https://169.254.169.254/latest/meta-data/"][1]
    assert "(.internal)" in refused["https://metadata.google.internal/"][1]
    bootstrap.override(clock=clock)  # the command started a container of its own
    stored = api.container.clients.get(client_id)
    assert stored is not None
    assert stored.webhook is None

    # Given the loopback receiver stored anyway, as a URL registered before these rules was
    sealed = api.container.cipher.encrypt(b"whsec_" + b"a" * 43, secret_context(client_id))
    api.container.clients.put(replace(stored, webhook=Webhook(url=url, secret_sealed=sealed)))
    webhooks = Webhooks(api)
    phone = new_number()
    Setup(api, webhooks, integrator, state, url).enroll(phone)
    webhooks.monitor_pass()
    operator.script(phone, latestSimChange=clock.now())
    clock.advance(hours=1)
    webhooks.monitor_pass()

    # When its change event is delivered
    delivered = webhooks.deliver()

    # Then the delivery failed without reaching the receiver, to be retried, and the log says why
    assert delivered == (1, 1)
    assert state.attempts == []
    assert state.rejected == 0
    assert webhooks.backoffs == [30]
    written = "\n".join(logged.lines)
    assert "refused: a webhook URL's host must be public: 127.0.0.1 is a loopback address" in written
    assert "receiver-token" not in written
