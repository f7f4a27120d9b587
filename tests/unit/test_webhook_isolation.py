"""One client's slow receiver delays no other client's deliveries: the delivery function's batch of
ten runs its POSTs side by side, each bounded by its own deadline, and starts none it has no time to
finish, so a batch is never cut off by the function's timeout (which would give every message back to
SQS, the delivered ones too, and deliver them twice).

The function is invoked as Lambda invokes it (an SQS event, a context with the template's 60 s), on
a container of in-memory stores and the real HTTP sender, whose connections are fakes: client B's
receiver answers at once; client A's holds every connection open, answering nothing, until B has had
all its events (then its deadline cuts it off). No socket, no clock read, nothing slept: if the
deliveries ran one after the other, A's would each have to give up before B's first arrived.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from phoneid import bootstrap
from phoneid.adapters.webhook_http import HttpWebhookSender
from phoneid.config import Settings
from phoneid.domain.signals import ChangeEvent, ChangeKind
from phoneid.domain.webhooks import to_message
from phoneid.services.clients import ClientAdmin
from phoneid.services.webhooks import WebhookDelivery
from phoneid_dev.events import FunctionContext
from tests.fakes import START, ContextCipher, FakeClock, FakeSocket, InMemoryClientStore, InMemoryWebhookQueue

ROOT = Path(__file__).resolve().parents[2]
ANSWER = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"
SLOW_PORT, FAST_PORT = 8081, 8082
# How long A's fake connection waits for B's events before it gives up anyway: only reached when
# deliveries run one after the other (the failure this test is about).
GIVE_UP_SECONDS = 10.0


class Receivers:
    """The two clients' receivers behind one connect function, and what each got."""

    def __init__(self, fast_events: int) -> None:
        self.lock = threading.Lock()
        self.fast_events = fast_events
        self.fast_got: list[str] = []  # event ids, in arrival order
        self.slow_finished = 0  # A's deliveries over (cut off), at any moment
        self.slow_finished_at_fast_arrivals: list[int] = []
        self.fast_all_in = threading.Event()

    def __call__(self, address: tuple[str, int], timeout: float) -> Any:
        return Held(self) if address[1] == SLOW_PORT else Prompt(self)


class Connection(FakeSocket):
    def __init__(self, receivers: Receivers) -> None:
        self.receivers = receivers
        self.request = bytearray()

    def settimeout(self, seconds: float | None) -> None:
        return

    def sendall(self, data: bytes, flags: int = 0) -> None:
        self.request += data

    def close(self) -> None:
        return


class Prompt(Connection):
    """B's receiver: notes the event, answers 204 at once."""

    answered = False

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        if self.answered:
            return 0
        self.answered = True
        head = self.request.split(b"\r\n\r\n", 1)[0].decode()
        event_id = next(
            line.split(": ", 1)[1] for line in head.split("\r\n") if line.startswith("PhoneID-Event-Id")
        )
        with self.receivers.lock:
            self.receivers.fast_got.append(event_id)
            self.receivers.slow_finished_at_fast_arrivals.append(self.receivers.slow_finished)
            if len(self.receivers.fast_got) == self.receivers.fast_events:
                self.receivers.fast_all_in.set()
        buffer[: len(ANSWER)] = ANSWER
        return len(ANSWER)


class Held(Connection):
    """A's receiver: answers nothing; its POST ends when its deadline cuts it off."""

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        self.receivers.fast_all_in.wait(GIVE_UP_SECONDS)
        with self.receivers.lock:
            self.receivers.slow_finished += 1
        raise TimeoutError("timed out")


@pytest.fixture
def production(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A production stack's settings in the environment, and no container yet."""
    for name in Settings.variable_names():
        monkeypatch.setenv(name, f"https://{name.lower()}.test" if name.endswith("_URL") else "test")
    for name, value in {
        "KEY_INACTIVITY_DAYS": "90",
        "SMS_PER_NUMBER_PER_HOUR": "5",
        "SMS_PER_CLIENT_PER_HOUR": "500",
        "MONITOR_MAX_SEGMENTS": "256",
        "DECISION_RETENTION_DAYS": "1825",
        "PHONEID_TIER": "production",
        "PHONEID_REGION": "US",
        "CONNECT_TRANSPORT": "s3",
        "CAMARA_SUBSCRIPTIONS": "",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_METRICS_NAMESPACE": "PhoneID",
        "POWERTOOLS_METRICS_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    bootstrap.reset()
    yield
    bootstrap.reset()


def delivery_function() -> Any:
    path = ROOT / "functions" / "webhook_delivery" / "app.py"
    spec = importlib.util.spec_from_file_location(f"webhook_delivery_{uuid4().hex}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


class Stack:
    """Clients A (slow receiver) and B (fast receiver) with webhooks, and the delivery function."""

    def __init__(self, receivers: Receivers) -> None:
        clients, cipher, clock = InMemoryClientStore(), ContextCipher(), FakeClock()
        admin = ClientAdmin(clients, clock, "production", "US", cipher=cipher, loopback_webhooks=True)
        for client_id, port in (("client-a", SLOW_PORT), ("client-b", FAST_PORT)):
            admin.create(client_id=client_id)
            admin.set_webhook(client_id, f"http://receiver.localhost:{port}/phoneid")
        self.queue = InMemoryWebhookQueue()
        sender = HttpWebhookSender(resolver=Loopback(), allow_loopback=True, connect=receivers)
        bootstrap.override(
            webhook_delivery=WebhookDelivery(
                clients=clients, cipher=cipher, sender=sender, queue=self.queue, clock=clock
            )
        )
        self.handler = delivery_function()

    def invoke(self, records: list[dict[str, Any]], seconds: float = 60) -> dict[str, Any]:
        answer: dict[str, Any] = self.handler(
            {"Records": records},
            FunctionContext(function_name="WebhookDeliveryFunction", timeout_seconds=seconds),
        )
        return answer


class Loopback:
    def addresses(self, host: str, port: int) -> list[str]:
        return ["127.0.0.1"]


def record(client_id: str, number: int) -> dict[str, Any]:
    event = ChangeEvent(
        event_id=f"{client_id}-{number}",
        kind=ChangeKind.SIM_SWAP,
        phone_number=f"+1202555{number:04d}",
        occurred_at=START,
        client_id=client_id,
    )
    return {
        "messageId": f"message-{client_id}-{number}",
        "receiptHandle": f"receipt-{client_id}-{number}",
        "body": to_message(event),
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "eventSource": "aws:sqs",
    }


def test_a_slow_receiver_of_client_a_does_not_delay_client_bs_deliveries(production: None) -> None:
    # Given a batch of ten: four events of client A, whose receiver never answers, then six of B
    receivers = Receivers(fast_events=6)
    stack = Stack(receivers)
    records = [record("client-a", n) for n in range(4)] + [record("client-b", n) for n in range(6)]

    # When the delivery function gets the batch
    answer = stack.invoke(records)

    # Then B got each of its six events once, all while A's deliveries were still held open
    assert sorted(receivers.fast_got) == [f"client-b-{n}" for n in range(6)]
    assert receivers.slow_finished_at_fast_arrivals == [0] * 6
    # And only A's four are handed back to SQS, each after its first backoff
    assert answer == {"batchItemFailures": [{"itemIdentifier": f"message-client-a-{n}"} for n in range(4)]}
    assert sorted(stack.queue.retries) == [(f"receipt-client-a-{n}", 30) for n in range(4)]


def test_a_delivery_the_invocation_has_no_time_to_finish_is_not_started(production: None) -> None:
    # Given B's receiver, and an invocation with 20 s left: less than one delivery may take
    receivers = Receivers(fast_events=2)
    stack = Stack(receivers)

    # When the delivery function gets two of B's events
    answer = stack.invoke([record("client-b", n) for n in range(2)], seconds=20)

    # Then nothing is POSTed, and both are handed back to be offered again at once: no batch is
    # cut off by the function's timeout after some of its events were delivered
    assert receivers.fast_got == []
    assert answer == {"batchItemFailures": [{"itemIdentifier": f"message-client-b-{n}"} for n in range(2)]}
    assert stack.queue.retries == [("receipt-client-b-0", 0), ("receipt-client-b-1", 0)]
