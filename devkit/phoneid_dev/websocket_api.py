"""The WebSocket API and its management endpoint, as API Gateway runs them: ``$connect`` decides,
then the connection waits for pushes, which handlers send through boto3's ``apigatewaymanagementapi``
(``POST /_ws-management/@connections/{id}``)."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from phoneid_dev.console import log
from phoneid_dev.events import LambdaContext, websocket_event
from phoneid_dev.stack import LocalStack


class WebSocketApi:
    def __init__(self, stack: LocalStack) -> None:
        self._stack = stack
        self._function = stack.template.websocket_function
        self._sockets: dict[str, WebSocket] = {}  # connection id -> its open socket

    def routes(self) -> list[BaseRoute]:
        return [
            WebSocketRoute("/_ws", self.connection),
            Route("/_ws-management/@connections/{connection_id}", self.push, methods=["POST"]),
        ]

    def _invoke(
        self, connection_id: str, host: str, route_key: str, query: dict[str, str] | None = None
    ) -> Any:
        event = websocket_event(
            route_key=route_key, connection_id=connection_id, query=query, domain_name=host
        )
        return self._stack.invoke(self._function, event, LambdaContext(function_name=self._function))

    async def connection(self, websocket: WebSocket) -> None:
        """One client's connection, from ``$connect`` to ``$disconnect``."""
        connection_id = uuid.uuid4().hex[:16]
        host = websocket.headers.get("host", "localhost")
        answer = await run_in_threadpool(
            self._invoke, connection_id, host, "$connect", dict(websocket.query_params)
        )
        if int(answer.get("statusCode", 500)) != 200:
            await websocket.close(code=1008)
            log(f"WS  $connect -> {answer.get('statusCode')}")
            return
        await websocket.accept()
        self._sockets[connection_id] = websocket
        log(f"WS  $connect -> 200 ({connection_id})")
        try:
            while True:
                await websocket.receive_text()
                await run_in_threadpool(self._invoke, connection_id, host, "$default")
        except WebSocketDisconnect:
            pass
        finally:
            self._sockets.pop(connection_id, None)
            await run_in_threadpool(self._invoke, connection_id, host, "$disconnect")

    async def push(self, request: Request) -> Response:
        """API Gateway's management API: POST @connections/{id} pushes to that connection."""
        socket = self._sockets.get(request.path_params["connection_id"])
        if socket is None:
            return JSONResponse(
                {"message": "Gone"}, status_code=410, headers={"x-amzn-ErrorType": "GoneException"}
            )
        await socket.send_text((await request.body()).decode())
        log(f"WS  push -> {request.path_params['connection_id']}")
        return Response(status_code=200)
