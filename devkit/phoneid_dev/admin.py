"""The local stack's own routes under ``/_local``: what a developer (or a test) does to the stack
that has no API in AWS: make clients, read the outbox, move the clock, script the operator, run a
change-monitor pass, retry failed webhooks, and ask how to reach it all."""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from phoneid_dev.console import log
from phoneid_dev.devstack import DevStack


class AdminRoutes:
    def __init__(self, dev: DevStack) -> None:
        self._dev = dev

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/_local/clients", self.clients, methods=["POST"]),
            Route("/_local/info", self.info, methods=["GET"]),
            Route("/_local/outbox", self.outbox, methods=["GET"]),
            Route("/_local/clock", self.clock, methods=["POST"]),
            Route("/_local/operator", self.operator, methods=["POST", "DELETE"]),
            Route("/_local/monitor", self.monitor, methods=["POST"]),
            Route("/_local/webhooks/retry", self.webhooks_retry, methods=["POST"]),
        ]

    async def clients(self, request: Request) -> Response:
        try:
            spec = json.loads(await request.body() or b"{}")
            if not isinstance(spec, dict):
                raise ValueError("body must be a JSON object")
            created = await run_in_threadpool(self._dev.create_client, **spec)
        except (ValueError, KeyError, TypeError) as error:
            return JSONResponse({"message": f"invalid client spec: {error}"}, status_code=400)
        return JSONResponse(created, status_code=201)

    async def info(self, request: Request) -> Response:
        return JSONResponse(self._dev.facts())

    async def outbox(self, request: Request) -> Response:
        return JSONResponse(self._dev.outbox.messages())

    async def clock(self, request: Request) -> Response:
        try:
            seconds = float(json.loads(await request.body() or b"{}").get("advanceSeconds", 0))
            now = self._dev.clock.advance(seconds)
        except (ValueError, TypeError, AttributeError) as error:
            return JSONResponse({"message": f"invalid clock change: {error}"}, status_code=400)
        log(f"clock advanced {seconds:g} s")
        return JSONResponse({"now": now.isoformat()})

    async def operator(self, request: Request) -> Response:
        """Script the fake operator's answers for a number (production tier): the JSON of ``/_script``."""
        operator = self._dev.operator
        if operator is None:
            return JSONResponse({"message": "a Sandbox stack has no operator to script"}, status_code=400)
        if request.method == "DELETE":
            operator.clear_scripts()
            return Response(status_code=204)
        try:
            operator.script_json(json.loads(await request.body() or b"{}"))
        except (ValueError, TypeError) as error:
            return JSONResponse({"message": f"invalid script: {error}"}, status_code=400)
        return Response(status_code=204)

    async def monitor(self, request: Request) -> Response:
        """One change-monitor pass now (its workflow); answers its summary {passId, checked, events, ...}."""
        try:
            report = await run_in_threadpool(self._dev.run_monitor)
        except ValueError as error:
            return JSONResponse({"message": str(error)}, status_code=400)
        log(f"MONITOR {report.get('checked')} identities, {report.get('events')} events")
        return JSONResponse(report)

    async def webhooks_retry(self, request: Request) -> Response:
        """Retry every failed delivery now instead of after its backoff (moto's SQS runs on real time)."""
        released = await run_in_threadpool(self._dev.retry_webhooks)
        return JSONResponse({"retried": released})
