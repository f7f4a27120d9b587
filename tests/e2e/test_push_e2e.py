"""Push before poll on `phoneid dev` (production tier): a SIM swap scripted on the fake operator is
sent by the operator to the stack's sink as a CAMARA CloudEvent, and reaches the integrator's
receiver on loopback as a signed webhook, with no monitor pass run."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from phoneid.domain.webhooks import loggable_url
from tests import http_collection
from tests.e2e.conftest import DevServer, HttpApi, start_dev_server
from tests.integration.test_webhooks import Receiver

pytestmark = pytest.mark.e2e

PHONE = "+12025550188"
ROOT = Path(__file__).resolve().parents[2]


class WallClock:
    """The receiver checks timestamps against this machine's clock, as a real receiver does."""

    def now(self) -> datetime:
        return datetime.now(UTC)


@pytest.fixture(scope="module")
def production_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    server = start_dev_server(tmp_path_factory.mktemp("push"), PHONEID_TIER="production")
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, str]]:
    state = Receiver(WallClock())  # type: ignore[arg-type]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            return

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(state.receive(self.headers, body))
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def test_a_scripted_sim_swap_is_pushed_by_the_operator_and_delivered_signed(
    production_server: DevServer, receiver: tuple[Receiver, str]
) -> None:
    state, url = receiver
    with httpx.Client(base_url=production_server.base_url, timeout=30) as http:
        # Given an integrator whose webhook is the receiver, and an identity it enrolled
        integrator = HttpApi(http).integrator()
        registered = production_server.cli(
            "clients", "update", integrator.client_id, "--webhook", url, "--local"
        )
        assert registered.returncode == 0, registered.stderr
        state.secret = next(
            line.split(": ", 1)[1]
            for line in registered.stdout.splitlines()
            if line.startswith("webhook_secret:")
        )
        enrolled = integrator.post("/v3/identity", {"phoneNumber": PHONE, "clientCustomerId": "push-1"})
        assert enrolled.status == 200, enrolled.body
        service_id = enrolled.json()["serviceId"]

        # When the operator sees the number's SIM change (and nobody runs a monitor pass)
        swapped = (datetime.now(UTC) - timedelta(minutes=2)).replace(microsecond=0)
        scripted = http.post(
            "/_local/operator", json={"phoneNumber": PHONE, "latestSimChange": swapped.isoformat()}
        )
        assert scripted.status_code == 204, scripted.text

        # Then the receiver gets one SIM_SWAP, verified with the webhook secret
        deadline = time.monotonic() + 30
        while not state.events and time.monotonic() < deadline:
            time.sleep(0.2)  # waiting for the operator, the stack and its queue poller, not timing them
    assert state.rejected == 0
    (event,) = state.events.values()
    assert event["eventType"] == "SIM_SWAP"
    assert event["serviceId"] == service_id
    assert event["phoneNumber"] == PHONE
    assert event["clientCustomerId"] == "push-1"
    assert event["occurredAt"] == swapped.isoformat().replace("+00:00", "Z")
    assert "MONITOR" not in production_server.output()

    # And the stack's console shows the delivery, settled at its first attempt, with the number masked
    feed_url = f"{production_server.base_url}/_local/console/feed"
    deadline = time.monotonic() + 30
    while not (deliveries := httpx.get(feed_url).json()["webhooks"]) and time.monotonic() < deadline:
        time.sleep(0.2)  # the poller tells the console once the sender returned
    (delivery,) = deliveries
    assert (delivery["event"], delivery["clientId"]) == ("SIM_SWAP", integrator.client_id)
    assert delivery["endpoint"] == loggable_url(url)
    assert [(a["attempt"], a["outcome"]) for a in delivery["attempts"]] == [(1, "settled")]
    assert PHONE not in json.dumps(deliveries)


def test_the_webhooks_http_collection_gets_the_receiver_a_sim_swap(
    production_server: DevServer, receiver: tuple[Receiver, str]
) -> None:
    # Given a client whose webhook is the receiver (the collection's first step, a command)
    state, url = receiver
    with httpx.Client(base_url=production_server.base_url, timeout=30) as http:
        created = http.post("/_local/clients", json={}).json()
        registered = production_server.cli(
            "clients", "update", created["client_id"], "--webhook", url, "--local"
        )
        assert registered.returncode == 0, registered.stderr
        state.secret = next(
            line.split(": ", 1)[1]
            for line in registered.stdout.splitlines()
            if line.startswith("webhook_secret:")
        )
        collection = http_collection.load(
            ROOT / "docs" / "http" / "webhooks.http",
            {"B": production_server.base_url, "ID": created["client_id"], "SECRET": created["client_secret"]},
        )

        # When docs/http/webhooks.http is sent in order
        sent = http_collection.Run(collection, http_collection.sender(http)).all()

        # Then every request succeeds, and the receiver gets the number's SIM_SWAP, signed
        assert [response.is_success for _, response in sent] == [True] * len(sent), [r.text for _, r in sent]
        deadline = time.monotonic() + 30
        while not state.events and time.monotonic() < deadline:
            time.sleep(0.2)  # waiting for the operator, the stack and its queue poller, not timing them
    assert state.rejected == 0
    (event,) = state.events.values()
    assert (event["eventType"], event["phoneNumber"]) == ("SIM_SWAP", "+12025550143")
    assert event["clientCustomerId"] == "cust-1"
