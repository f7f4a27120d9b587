"""The local stack's HTTP front (``phoneid dev``) answers as API Gateway does: every method reaches the
gateway emulation (a method with no route is 403/8001, not a 405), requests past the number in
flight are shed with 429/8018 and Retry-After, and a request whose client left before it ran is
dropped. Called in-process, with a gateway whose handler the test holds and releases."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from phoneid_dev.admission import Admission
from phoneid_dev.gateway import HttpResponse, LocalGateway
from phoneid_dev.gateway_route import GatewayRoute
from phoneid_dev.server import build_app
from phoneid_dev.snapshot.own_clients import OwnClients
from phoneid_dev.template import template

BASE = "http://127.0.0.1:3000"
NO_ROUTE = {"code": 8001, "message": "No endpoint matches this method and path"}
THROTTLED = {"code": 8018, "message": "Rate limit exceeded; wait for Retry-After seconds"}


class HeldGateway(LocalGateway):
    """The template's gateway, except that ``/held`` waits for the test to release it."""

    def __init__(self) -> None:
        super().__init__(SimpleNamespace(template=template()))  # type: ignore[arg-type]
        self.entered = threading.Event()
        self.release = threading.Event()
        self.ran: list[str] = []

    def handle(self, method: str, path: str, *args: Any, **kwargs: Any) -> HttpResponse:
        if path != "/held":
            return super().handle(method, path, *args, **kwargs)
        self.ran.append(method)
        self.entered.set()
        assert self.release.wait(timeout=30)
        return HttpResponse(200, {"Content-Type": "application/json"}, '{"ok": true}')


def app_with(gateway: HeldGateway, **limits: Any) -> Any:
    dev: Any = SimpleNamespace(
        gateway=gateway,
        stack=SimpleNamespace(template=template()),
        create_client=lambda **_: {"client_id": "demo", "client_secret": "s", "public_api_key": "k"},
        own_clients=OwnClients(),
        base_url=BASE,
        tier="sandbox",
        region="US",
        # What the console watches (phoneid_dev.console_page)
        clock=SimpleNamespace(now=lambda: datetime.now(UTC)),
        queue_pollers=[],
        outbox=SimpleNamespace(messages=list),
    )
    return build_app(dev, **limits)


def run(scenario: Callable[[httpx.AsyncClient], Awaitable[Any]], app: Any) -> Any:
    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
            return await scenario(http)

    return asyncio.run(go())


async def held_until_entered(http: httpx.AsyncClient, gateway: HeldGateway) -> asyncio.Task[httpx.Response]:
    """A request that occupies a place until the test releases it; it is running when this returns."""
    holding = asyncio.create_task(http.post("/held", json={}))
    # Waiting in a thread for the handler to start: an event, never a timed sleep.
    assert await asyncio.to_thread(gateway.entered.wait, 30)
    return holding


@pytest.mark.parametrize("method", ["TRACE", "PROPFIND", "FOO", "CONNECT"])
def test_any_method_without_a_route_is_api_gateways_403_8001(method: str) -> None:
    app = app_with(HeldGateway())

    async def scenario(http: httpx.AsyncClient) -> httpx.Response:
        return await http.request(method, "/v3/start")

    answer = run(scenario, app)

    assert answer.status_code == 403
    assert answer.json() == NO_ROUTE
    assert answer.headers["content-type"] == "application/json"


def test_past_the_requests_in_flight_the_api_answers_429_8018_with_retry_after(
    capsys: pytest.CaptureFixture[str],
) -> None:
    gateway = HeldGateway()
    app = app_with(gateway, max_in_flight=1, queue_seconds=0)

    async def scenario(http: httpx.AsyncClient) -> tuple[httpx.Response, ...]:
        holding = await held_until_entered(http, gateway)
        shed = await http.post("/v3/start", json={})
        gateway.release.set()
        first = await holding
        after = await http.post("/held", json={})  # the place was given back
        return shed, first, after

    shed, first, after = run(scenario, app)

    assert shed.status_code == 429
    assert shed.json() == THROTTLED
    assert shed.headers["retry-after"] == "1"
    assert (first.status_code, after.status_code) == (200, 200)
    assert gateway.ran == ["POST", "POST"]
    assert "POST /v3/start -> 429 code=8018" in capsys.readouterr().err


def test_a_request_waits_briefly_for_a_place_rather_than_being_shed() -> None:
    gateway = HeldGateway()
    app = app_with(gateway, max_in_flight=1, queue_seconds=30)

    async def scenario(http: httpx.AsyncClient) -> tuple[httpx.Response, ...]:
        holding = await held_until_entered(http, gateway)
        waiting = asyncio.create_task(http.post("/held", json={}))
        gateway.release.set()
        return await holding, await waiting

    first, second = run(scenario, app)

    assert (first.status_code, second.status_code) == (200, 200)
    assert gateway.ran == ["POST", "POST"]


def _http_scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:3000"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 3000),
    }


def test_a_request_whose_client_left_while_it_waited_is_never_run(capsys: pytest.CaptureFixture[str]) -> None:
    gateway = HeldGateway()
    app = app_with(gateway, max_in_flight=1, queue_seconds=30)

    async def scenario(http: httpx.AsyncClient) -> tuple[int, int]:
        holding = await held_until_entered(http, gateway)
        body_read, client_left = asyncio.Event(), asyncio.Event()
        statuses: list[int] = []

        async def receive() -> dict[str, Any]:
            if not body_read.is_set():
                body_read.set()
                return {"type": "http.request", "body": b"{}", "more_body": False}
            await client_left.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        waiting = asyncio.create_task(app(_http_scope("/held"), receive, send))
        await body_read.wait()
        client_left.set()  # it leaves while the first request still holds the only place
        gateway.release.set()
        first = await holding
        await waiting
        return first.status_code, statuses[0]

    first, dropped = run(scenario, app)

    assert first == 200
    assert dropped == 499
    assert gateway.ran == ["POST"]  # the second request never reached a handler
    assert "POST /held dropped: the client left" in capsys.readouterr().err


class BrokenFeed:
    def observe(self, *args: Any) -> None:
        raise RuntimeError("the console cannot read")


def test_a_console_that_fails_never_costs_a_request_its_answer() -> None:
    # Given the gateway route watched by a console feed that raises
    route = GatewayRoute(HeldGateway(), Admission(4, 1.0), BrokenFeed())  # type: ignore[arg-type]
    app = Starlette(routes=[Route("/{path:path}", route)])

    async def scenario(http: httpx.AsyncClient) -> httpx.Response:
        return await http.request("TRACE", "/v3/start")

    # Then the request has API Gateway's answer all the same
    answer = run(scenario, app)
    assert answer.status_code == 403
    assert answer.json() == NO_ROUTE


def test_a_link_is_logged_by_its_route_never_its_token(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a texted link's token (a credential: whoever opens the link proves possession)
    token = "Zm9vYmFyYmF6cXV4LXRoZS1saW5rcy1vd24tdG9rZW4"
    app = app_with(HeldGateway())

    async def scenario(http: httpx.AsyncClient) -> tuple[httpx.Response, ...]:
        return (await http.get(f"/l/{token}"),)

    # When it is opened
    (opened,) = run(scenario, app)

    # Then the stack's log names the route, as API Gateway's resourcePath does, and not the token
    logged = capsys.readouterr().err
    assert f"GET /l/{{token}} -> {opened.status_code}" in logged
    assert token not in logged
