"""The local stack's API: every request that no local route takes goes to the API Gateway emulation
(``phoneid_dev.gateway``), once admitted (``phoneid_dev.admission``), and is logged with its answer
and shown on the console (``phoneid_dev.console_page``)."""

from __future__ import annotations

import time

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import request_response
from starlette.types import Receive, Scope, Send

from phoneid_dev.admission import Admission
from phoneid_dev.console import log
from phoneid_dev.console_page.feed import ConsoleFeed
from phoneid_dev.gateway import HttpResponse, LocalGateway


class GatewayRoute:
    """A plain ASGI app, which Starlette routes every method to (TRACE, PROPFIND, ...): the emulated
    API Gateway answers a method with no route (403/8001), never Starlette's 405."""

    def __init__(self, gateway: LocalGateway, admission: Admission, feed: ConsoleFeed | None = None) -> None:
        self._gateway = gateway
        self._admission = admission
        self._feed = feed
        self._app = request_response(self.api)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    async def api(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            sent = await request.body()  # whole, first: is_disconnected would swallow a part of it
        except ClientDisconnect:
            return self._dropped(request, started)
        if not await self._admission.admitted():
            return await self._answered(request, sent, started, self._gateway.throttled())
        try:
            if await request.is_disconnected():
                # Its client left while it waited for a place: nobody would read the answer.
                return self._dropped(request, started)
            response = await run_in_threadpool(
                self._gateway.handle,
                request.method,
                request.url.path,
                dict(request.headers),
                sent.decode("utf-8", errors="replace") if request.method != "GET" else None,
                request.client.host if request.client else "127.0.0.1",
                dict(request.query_params),
                request.headers.get("host", "localhost"),
            )
        finally:
            self._admission.release()
        return await self._answered(request, sent, started, response)

    async def _answered(
        self, request: Request, sent: bytes, started: float, response: HttpResponse
    ) -> Response:
        code = ""
        if response.status >= 400 and response.headers.get("Content-Type", "").startswith("application/json"):
            try:
                code = f" code={response.json().get('code')}"
            except ValueError:
                code = ""
        elapsed = (time.perf_counter() - started) * 1000
        named = self._gateway.resource(request.method, request.url.path)
        log(f"{request.method} {named} -> {response.status}{code} ({elapsed:.0f} ms)")
        if self._feed is not None:
            try:
                # In a thread: the feed asks the client store whether a client it has not seen is one.
                await run_in_threadpool(
                    self._feed.observe,
                    request.method,
                    request.url.path,
                    dict(request.headers),
                    sent.decode("utf-8", errors="replace"),
                    response.status,
                    response.body,
                    elapsed,
                )
            except Exception as error:  # the console never costs a request its answer
                log(f"console feed skipped {request.method} {named}: {type(error).__name__}")
        return Response(response.body, status_code=response.status, headers=dict(response.headers))

    def _dropped(self, request: Request, started: float) -> Response:
        elapsed = (time.perf_counter() - started) * 1000
        named = self._gateway.resource(request.method, request.url.path)
        log(f"{request.method} {named} dropped: the client left ({elapsed:.0f} ms)")
        return Response(status_code=499)  # nginx's "client closed request"; nobody reads it
