"""A webhook POST has one deadline, from connecting to the answer's last byte: a receiver that trickles
its answer cannot hold a delivery past it, however often it sends a byte.

No sockets: the receiver's end of the connection is a fake that answers one byte per 1.5 s of an
injected monotonic clock, and honours the timeout PhoneID gives each operation as a socket would
(a byte that would come later than the timeout does not come: the read times out at the timeout).
"""

from __future__ import annotations

from typing import Any

import pytest

from phoneid.adapters.webhook_http import HttpWebhookSender
from phoneid.domain.webhooks import DELIVERY_DEADLINE_SECONDS, WebhookUnreachable
from tests.fakes import FakeSocket

ANSWER = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"
# Plain HTTP to loopback, as the local stack allows: the fake connection carries no TLS.
URL = "http://127.0.0.1:8765/phoneid"


class Seconds:
    """A monotonic clock that moves only when the fake receiver makes PhoneID wait."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class Trickling(FakeSocket):
    """The receiver's end of one connection: it takes the request, then answers ``answer`` one byte
    every ``every`` seconds of the clock."""

    def __init__(self, clock: Seconds, every: float, answer: bytes = ANSWER) -> None:
        self.clock = clock
        self.every = every
        self.unsent = bytearray(answer)
        self.request = bytearray()
        self.timeout: float | None = None
        self.closed = False

    def settimeout(self, seconds: float | None) -> None:
        self.timeout = seconds

    def sendall(self, data: bytes, flags: int = 0) -> None:
        self.request += data

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        if not self.unsent:
            return 0
        if self.timeout is not None and self.timeout < self.every:
            self.clock.now += self.timeout
            raise TimeoutError("timed out")
        self.clock.now += self.every
        buffer[0] = self.unsent.pop(0)
        return 1

    def close(self) -> None:
        self.closed = True


class Loopback:
    def addresses(self, host: str, port: int) -> list[str]:
        return ["127.0.0.1"]


def plain_http_sender(clock: Seconds, receiver: Trickling) -> HttpWebhookSender:
    return HttpWebhookSender(
        resolver=Loopback(),
        allow_loopback=True,
        connect=lambda address, timeout: receiver,  # type: ignore[arg-type, return-value]
        now=clock,
    )


def test_a_receiver_trickling_a_byte_every_1_5_s_fails_the_post_at_its_5_s_deadline() -> None:
    # Given a receiver that answers 204, one byte every 1.5 s (each read well within 5 s)
    clock = Seconds()
    receiver = Trickling(clock, every=1.5)
    sender = plain_http_sender(clock, receiver)
    started = clock.now

    # When an event is POSTed to it
    with pytest.raises(WebhookUnreachable) as failed:
        sender.post(URL, b'{"events": []}', {"Content-Type": "application/json"})

    # Then the delivery failed as a timeout, the request sent whole, the answer cut off at the deadline
    # (by the injected clock), and the connection closed
    assert str(failed.value) == "TimeoutError"
    assert receiver.request.endswith(b'{"events": []}')
    assert clock.now - started == DELIVERY_DEADLINE_SECONDS
    assert len(receiver.unsent) > 0
    assert receiver.closed


def test_a_receiver_that_answers_within_the_deadline_is_delivered_to() -> None:
    # Given a receiver whose whole answer takes 46 bytes x 0.1 s = 4.6 s, under the deadline
    clock = Seconds()
    receiver = Trickling(clock, every=0.1)
    sender = plain_http_sender(clock, receiver)

    # When an event is POSTed to it, Then its 204 delivers it
    assert sender.post(URL, b"{}", {}) == 204
    assert receiver.timeout is not None
    assert receiver.timeout <= DELIVERY_DEADLINE_SECONDS


def test_a_connection_that_takes_the_whole_deadline_leaves_no_time_to_send() -> None:
    # Given a connection accepted only as the deadline passes
    clock = Seconds()
    receiver = Trickling(clock, every=0.1)

    def slow_connect(address: tuple[str, int], timeout: float) -> Any:
        clock.now += timeout
        return receiver

    sender = HttpWebhookSender(resolver=Loopback(), allow_loopback=True, connect=slow_connect, now=clock)

    # When an event is POSTed, Then nothing is sent: the deadline passed
    with pytest.raises(WebhookUnreachable, match="TimeoutError"):
        sender.post(URL, b"{}", {})
    assert receiver.request == b""
