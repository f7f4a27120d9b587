"""docs/webhooks.md's Python verification code, run as a receiver would run it: on a signed delivery
whose header names come in whatever case the receiver's server hands them over."""

from __future__ import annotations

import re
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from phoneid.domain.signals import ChangeEvent, ChangeKind
from phoneid.domain.webhooks import delivery_body, delivery_headers
from phoneid_dev.template import ROOT

SECRET = "whsec_vG7CCO2e50IlrHuoZj-V13Kcv6jI25_Lh5BYY_Qr5Vg"
EVENT = ChangeEvent(
    event_id="58a4baba-360d-4da1-b2b7-10a14830a3b8",
    kind=ChangeKind.SIM_SWAP,
    phone_number="+12025550143",
    occurred_at=datetime(2026, 5, 1, 10, tzinfo=UTC),
    client_id="client-1",
    service_id="72beb529-42d4-49fd-9621-f2a2e08ecbeb",
    client_customer_id="cust-1",
)

Verify = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="module")
def verified_events() -> Verify:
    """The doc's ``verified_events``, taken from its Python block and run as written."""
    document = (ROOT / "docs" / "webhooks.md").read_text()
    section = document.split("\n## Verifying a delivery\n", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(compile(code[1], "docs/webhooks.md", "exec"), namespace)  # noqa: S102 - the doc's own code
    function: Verify = namespace["verified_events"]
    return function


def delivery(signed_at: int | None = None) -> tuple[dict[str, str], bytes]:
    """A delivery as PhoneID signs and sends it: its headers and body."""
    timestamp = int(time.time()) if signed_at is None else signed_at
    body = delivery_body(EVENT, datetime.fromtimestamp(timestamp, UTC))
    return delivery_headers(EVENT, SECRET, body, timestamp), body


@pytest.fixture
def doc_receiver() -> Iterator[tuple[str, list[tuple[dict[str, str], bytes]]]]:
    """The doc's receiver: http.server, handing on ``dict(self.headers)`` and the raw body."""
    received: list[tuple[dict[str, str], bytes]] = []

    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            return

        def do_POST(self) -> None:
            received.append((dict(self.headers), self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

    server = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    server.shutdown()
    server.server_close()


def test_the_docs_receiver_verifies_a_delivery_sent_over_http(
    verified_events: Verify, doc_receiver: tuple[str, list[tuple[dict[str, str], bytes]]]
) -> None:
    # Given a signed delivery POSTed to the doc's receiver by a client that writes header names its
    # own way (urllib sends "Phoneid-timestamp")
    url, received = doc_receiver
    headers, body = delivery()
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310
        assert answer.status == 204

    # When the doc's code checks what the receiver got: a plain dict of the headers
    [(got_headers, got_body)] = received
    events = verified_events(SECRET, got_headers, got_body)

    # Then it returns the event
    assert [event["eventId"] for event in events] == [EVENT.event_id]


@pytest.mark.parametrize(
    "rename",
    [str, str.lower, str.title, str.upper],
    ids=["as-sent", "lower-case", "title-case", "upper-case"],
)
def test_header_names_in_any_case_are_read(verified_events: Verify, rename: Callable[[str], str]) -> None:
    headers, body = delivery()

    events = verified_events(SECRET, {rename(name): value for name, value in headers.items()}, body)

    assert events[0]["eventType"] == "SIM_SWAP"


def test_a_tampered_stale_or_unsigned_delivery_is_refused_with_value_error(verified_events: Verify) -> None:
    headers, body = delivery()
    stale_headers, stale_body = delivery(signed_at=int(time.time()) - 301)

    with pytest.raises(ValueError, match="signature"):
        verified_events(SECRET, headers, body.replace(b"cust-1", b"cust-2"))
    with pytest.raises(ValueError, match="stale"):
        verified_events(SECRET, stale_headers, stale_body)
    with pytest.raises(ValueError, match="signature"):
        verified_events(SECRET, {"Content-Type": "application/json"}, body)
