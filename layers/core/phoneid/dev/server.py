"""``phoneid dev``: the whole stack on 127.0.0.1 with no Docker and no AWS account.

An HTTP server turns requests into API Gateway REST proxy events and runs the authorizers and the
handlers of ``template.yaml`` in this process; it also serves the WebSocket API (and its management
endpoint, which handlers reach through boto3 as they would in AWS), the web SDK and a demo
integrator. AWS is moto's server, which other processes (the ``phoneid`` CLI, the AWS CLI) reach at
the printed endpoint. Every SMS and email is printed and listed at ``/_local/outbox``. Connect
batches run as in AWS: an upload starts the state machine (moto's Step Functions, its Lambda tasks
run by the handlers in worker processes of their own; ``phoneid.dev.workflows``,
``phoneid.dev.processes``), and each execution is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from phoneid.dev.clock import OffsetClock
from phoneid.dev.emulation import MotoServer
from phoneid.dev.events import LambdaContext, websocket_event
from phoneid.dev.gateway import AuthorizerAnswers, LocalGateway
from phoneid.dev.operator import FakeOperator
from phoneid.dev.outbox import Outbox
from phoneid.dev.processes import FunctionProcesses, function_specs
from phoneid.dev.sftp import DEFAULT_PORT, LocalSftpServer, s3_client
from phoneid.dev.stack import LocalStack
from phoneid.dev.template import ROOT
from phoneid.dev.triggers import Polled, function_context, pollers, scheduled_functions, scheduler_event
from phoneid.domain.connect import ConnectTransport

# Where a running stack tells other processes (the CLI with --local) how to reach it.
STATE_FILE = Path(os.environ.get("PHONEID_DEV_STATE", ROOT / ".phoneid" / "dev.json"))
# Beside it, what `sam local start-api --env-vars` takes to run the functions against this stack (README).
SAM_ENV_VARS = STATE_FILE.with_name("sam-env-vars.json")
WEB_CLIENT = ROOT / "clients" / "web"


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class DevStack:
    """moto, the provisioned template and the gateway: everything but the HTTP listener."""

    def __init__(
        self,
        tier: str,
        region: str,
        base_url: str,
        moto_port: int | None = None,
        *,
        local_url: str | None = None,
        connect_transport: str | None = None,
    ) -> None:
        self.moto = MotoServer(moto_port).start()
        ws_base = base_url.replace("http", "ws", 1)
        parameters = {"Tier": tier, "Region": region, "LogLevel": "WARNING"}
        if connect_transport:  # else the template's default, as a deploy without it gets
            parameters["ConnectTransport"] = connect_transport
        self.operator: FakeOperator | None = None
        if tier == "production":
            parameters |= self._start_operator()
        self.stack = LocalStack(
            parameters=parameters,
            # What API Gateway would give in AWS, served by this process instead.
            overrides={
                "PUBLIC_BASE_URL": base_url,
                "WEBSOCKET_URL": f"{ws_base}/_ws",
                "WEBSOCKET_MANAGEMENT_URL": f"{base_url}/_ws-management",
            },
        ).provision()
        os.environ.update(self.stack.environment())
        os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        from phoneid import bootstrap
        from phoneid.bootstrap import container

        bootstrap.reset()
        self.clock = OffsetClock()
        bootstrap.override(clock=self.clock)
        self.stack.processes = self._function_processes()
        self.tier, self.region, self.base_url = tier, region, base_url
        # Where processes on this machine reach it; base_url is what links carry (maybe a LAN address).
        self.local_url = local_url or base_url
        self.gateway = LocalGateway(self.stack, AuthorizerAnswers(self.clock.now))
        self.outbox = Outbox()
        # What Lambda's SQS event source mappings and EventBridge Scheduler do in AWS.
        self.queue_pollers = pollers(self.stack)
        # The change monitor runs when asked (a pass changes what a developer sees); the token key
        # rotation runs on its own, as its schedule runs it in AWS (``rotate_token_keys``).
        scheduled = scheduled_functions(self.stack.template)
        self.monitor = scheduled["WebhookMonitorSchedule"]
        self.key_rotation = scheduled["TokenKeysSchedule"]
        # Connect's transport as the template's ConnectTransport chooses: the SFTP server runs only
        # for sftp (Transfer Family exists only then); s3's presigned URLs go to moto's own endpoint.
        self.connect_transport = container().settings.connect_transport
        self.sftp: LocalSftpServer | None = (
            self._start_sftp() if self.connect_transport is ConnectTransport.SFTP else None
        )

    def _function_processes(self) -> FunctionProcesses | None:
        """Worker processes for every function, one invocation at a time each, reaching moto over
        HTTP; PHONEID_LAMBDA_PROCESSES caps them per function (default: the CPUs; 0: run in this
        process, one invocation at a time, e.g. to debug one)."""
        configured = os.environ.get("PHONEID_LAMBDA_PROCESSES", "").strip()
        if configured and not configured.isdigit():
            raise ValueError(f"PHONEID_LAMBDA_PROCESSES must be a whole number, not {configured!r}")
        limit = int(configured) if configured else None
        if limit == 0:
            return None
        from phoneid.dev.access.recording import worker_environment

        return FunctionProcesses(
            function_specs(self.stack.template),
            environment={
                **os.environ,
                "AWS_ENDPOINT_URL": self.moto.endpoint_url,
                **worker_environment(self.stack),  # when the functions' calls are recorded
            },
            clock_offset=lambda: self.clock.offset_seconds,
            limit=limit,
        )

    def _start_sftp(self) -> LocalSftpServer:
        """Connect's SFTP server (Transfer Family in AWS) on PHONEID_SFTP_PORT (default 2222, 0: any
        free port); when the default is taken, another free port (the banner and state file say which)."""
        from phoneid.bootstrap import container

        s3 = s3_client()
        bucket = container().settings.connect_bucket
        requested = os.environ.get("PHONEID_SFTP_PORT", "").strip()

        def server(port: int) -> LocalSftpServer:
            return LocalSftpServer(
                lambda name: container().connect_profiles.get_by_name(name),
                s3,
                bucket,
                port=port,
                host_key=STATE_FILE.parent / "sftp_host_ed25519_key",
                log=_log,
            )

        try:
            return server(int(requested) if requested else DEFAULT_PORT).start()
        except OSError:
            if requested:
                raise
            _log(
                f"SFTP port {DEFAULT_PORT} is taken: serving SFTP on a free port (PHONEID_SFTP_PORT chooses)"
            )
            return server(0).start()

    def _start_operator(self) -> dict[str, str]:
        """Production Mobile Auth and carrier signals against a fake CAMARA operator.

        PHONEID_DEVICE_MSISDN is "this SIM"; ``POST /_local/operator`` scripts the signals per number.
        """
        import boto3

        self.operator = FakeOperator(device_msisdn=os.environ.get("PHONEID_DEVICE_MSISDN") or None).start()
        secrets = boto3.client("secretsmanager")
        secrets.create_secret(Name="camara-operator", SecretString=self.operator.secret_string)
        settings = self.operator.settings
        return {
            "CamaraAuthorizeUrl": settings["CAMARA_AUTHORIZE_URL"],
            "CamaraTokenUrl": settings["CAMARA_TOKEN_URL"],
            "CamaraApiUrl": settings["CAMARA_API_URL"],
            "CamaraCredentialsSecret": "camara-operator",
            "CamaraNetworkApiUrl": settings["CAMARA_NETWORK_API_URL"],
        }

    def create_client(self, with_public_key: bool = False, **spec: Any) -> dict[str, str]:
        from phoneid.bootstrap import container
        from phoneid.domain.clients import Flag, Solution

        created = container().client_admin.create(
            solution=Solution(spec.get("solution", "identity")),
            name=str(spec.get("name", "")),
            countries=spec.get("countries") or ["*"],
            flags=[Flag(f) for f in spec["flags"]] if "flags" in spec else [Flag.AUTO_ENROLLMENT],
            client_id=spec.get("client_id"),
            client_secret=spec.get("client_secret"),
            tier=spec.get("tier"),
            region=spec.get("region"),
        )
        credentials = {"client_id": created.client.client_id, "client_secret": created.client_secret}
        if with_public_key:
            credentials["public_api_key"] = created.client.public_api_key
        return credentials

    def run_monitor(self) -> dict[str, Any]:
        """One change-monitor pass now, by the scheduled handler itself; then its events are delivered."""
        function = self.monitor
        report: dict[str, Any] = self.stack.invoke(
            function, scheduler_event(), function_context(self.stack.template, function)
        )
        self.deliver_queued()
        return report

    def rotate_token_keys(self) -> dict[str, Any]:
        """One run of the token key rotation, by its scheduled handler (the next window's key made)."""
        report: dict[str, Any] = self.stack.invoke(
            self.key_rotation, scheduler_event(), function_context(self.stack.template, self.key_rotation)
        )
        return report

    def deliver_queued(self) -> Polled:
        """Feed the queues' visible messages to their functions until none is left."""
        received = failed = 0
        for poller in self.queue_pollers:
            polled = poller.drain()
            received, failed = received + polled.received, failed + polled.failed
        if received:
            _log(f"WEBHOOK {received} event(s): {received - failed} settled, {failed} to retry")
        return Polled(received, failed)

    def retry_webhooks(self) -> int:
        """Every failed delivery's message visible again now (no waiting out the backoff), then fed."""
        released = sum(poller.release() for poller in self.queue_pollers)
        self.deliver_queued()
        return released

    def facts(self) -> dict[str, Any]:
        """How other processes reach this stack and its AWS: the state file of ``phoneid dev`` and
        ``GET /_local/info`` both say this (the CLI's ``--local`` reads either)."""
        return {
            "tier": self.tier,
            "region": self.region,
            "baseUrl": self.base_url,
            "localUrl": self.local_url,
            "pid": os.getpid(),
            "awsEndpointUrl": self.moto.endpoint_url,
            "environment": self.stack.environment(),
            "connectTransport": self.connect_transport.value,
            "sftp": (
                {"host": self.sftp.host, "port": self.sftp.port, "bucket": self.sftp.bucket}
                if self.sftp is not None
                else None
            ),
        }

    def stop(self) -> None:
        if self.sftp is not None:
            self.sftp.stop()
        if self.stack.processes is not None:
            self.stack.processes.stop()
        if self.operator is not None:
            self.operator.stop()
        self.moto.stop()


def build_app(dev: DevStack, *, max_in_flight: int = 32, queue_seconds: float = 1.0) -> Any:
    """The local stack's HTTP app. The API takes ``max_in_flight`` requests at once and lets others
    wait ``queue_seconds`` for a place before shedding them with 429
    (docs/adr/0046-local-api-gateway-every-method-and-a-bounded-queue.md)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Mount, Route, WebSocketRoute, request_response
    from starlette.staticfiles import StaticFiles
    from starlette.types import Receive, Scope, Send
    from starlette.websockets import WebSocket, WebSocketDisconnect

    from phoneid.dev.demo import demo_routes
    from phoneid.dev.gateway import HttpResponse
    from phoneid.dev.outbox import printed_line
    from phoneid.dev.pages import page_routes

    sockets: dict[str, WebSocket] = {}
    websocket_function = dev.stack.template.websocket_function

    async def local_clients(request: Request) -> Response:
        try:
            spec = json.loads(await request.body() or b"{}")
            if not isinstance(spec, dict):
                raise ValueError("body must be a JSON object")
            created = await run_in_threadpool(dev.create_client, **spec)
        except (ValueError, KeyError, TypeError) as error:
            return JSONResponse({"message": f"invalid client spec: {error}"}, status_code=400)
        return JSONResponse(created, status_code=201)

    async def local_info(request: Request) -> Response:
        return JSONResponse(dev.facts())

    async def local_outbox(request: Request) -> Response:
        return JSONResponse(dev.outbox.messages())

    async def local_clock(request: Request) -> Response:
        try:
            seconds = float(json.loads(await request.body() or b"{}").get("advanceSeconds", 0))
            now = dev.clock.advance(seconds)
        except (ValueError, TypeError, AttributeError) as error:
            return JSONResponse({"message": f"invalid clock change: {error}"}, status_code=400)
        _log(f"clock advanced {seconds:g} s")
        return JSONResponse({"now": now.isoformat()})

    async def local_operator(request: Request) -> Response:
        """Script the fake operator's answers for a number (production tier): the JSON of ``/_script``."""
        if dev.operator is None:
            return JSONResponse({"message": "a Sandbox stack has no operator to script"}, status_code=400)
        if request.method == "DELETE":
            dev.operator.clear_scripts()
            return Response(status_code=204)
        try:
            dev.operator.script_json(json.loads(await request.body() or b"{}"))
        except (ValueError, TypeError) as error:
            return JSONResponse({"message": f"invalid script: {error}"}, status_code=400)
        return Response(status_code=204)

    async def local_monitor(request: Request) -> Response:
        """One change-monitor pass now (the real handler); answers its report {identities, events, ...}."""
        try:
            report = await run_in_threadpool(dev.run_monitor)
        except ValueError as error:
            return JSONResponse({"message": str(error)}, status_code=400)
        _log(f"MONITOR {report.get('identities')} identities, {report.get('events')} events")
        return JSONResponse(report)

    async def local_webhooks_retry(request: Request) -> Response:
        """Retry every failed delivery now instead of after its backoff (moto's SQS runs on real time)."""
        released = await run_in_threadpool(dev.retry_webhooks)
        return JSONResponse({"retried": released})

    async def websocket_api(websocket: WebSocket) -> None:
        """The WebSocket API: $connect decides, then the connection waits for pushes."""
        connection_id = uuid.uuid4().hex[:16]
        host = websocket.headers.get("host", "localhost")

        def invoke(route_key: str, query: dict[str, str] | None = None) -> Any:
            event = websocket_event(
                route_key=route_key, connection_id=connection_id, query=query, domain_name=host
            )
            return dev.stack.invoke(
                websocket_function, event, LambdaContext(function_name=websocket_function)
            )

        answer = await run_in_threadpool(invoke, "$connect", dict(websocket.query_params))
        if int(answer.get("statusCode", 500)) != 200:
            await websocket.close(code=1008)
            _log(f"WS  $connect -> {answer.get('statusCode')}")
            return
        await websocket.accept()
        sockets[connection_id] = websocket
        _log(f"WS  $connect -> 200 ({connection_id})")
        try:
            while True:
                await websocket.receive_text()
                await run_in_threadpool(invoke, "$default")
        except WebSocketDisconnect:
            pass
        finally:
            sockets.pop(connection_id, None)
            await run_in_threadpool(invoke, "$disconnect")

    async def websocket_management(request: Request) -> Response:
        """API Gateway's management API: POST @connections/{id} pushes to that connection."""
        socket = sockets.get(request.path_params["connection_id"])
        if socket is None:
            return JSONResponse(
                {"message": "Gone"}, status_code=410, headers={"x-amzn-ErrorType": "GoneException"}
            )
        await socket.send_text((await request.body()).decode())
        _log(f"WS  push -> {request.path_params['connection_id']}")
        return Response(status_code=200)

    # Starlette's thread pool (40 threads, shared with the routes above) would queue any number of
    # requests, each answered long after its client gave up: like API Gateway's throttle, take what can
    # be worked on now, let a request wait briefly for a place, and shed the rest with 429.
    in_flight = asyncio.Semaphore(max_in_flight)

    async def admitted() -> bool:
        if not in_flight.locked():
            await in_flight.acquire()  # a free place: taken without waiting
            return True
        try:
            await asyncio.wait_for(in_flight.acquire(), queue_seconds)
        except TimeoutError:
            return False
        return True

    def answered(request: Request, started: float, response: HttpResponse) -> Response:
        code = ""
        if response.status >= 400 and response.headers.get("Content-Type", "").startswith("application/json"):
            try:
                code = f" code={response.json().get('code')}"
            except ValueError:
                code = ""
        elapsed = (time.perf_counter() - started) * 1000
        _log(f"{request.method} {request.url.path} -> {response.status}{code} ({elapsed:.0f} ms)")
        return Response(response.body, status_code=response.status, headers=dict(response.headers))

    def dropped(request: Request, started: float) -> Response:
        elapsed = (time.perf_counter() - started) * 1000
        _log(f"{request.method} {request.url.path} dropped: the client left ({elapsed:.0f} ms)")
        return Response(status_code=499)  # nginx's "client closed request"; nobody reads it

    async def api(request: Request) -> Response:
        started = time.perf_counter()
        try:
            sent = await request.body()  # whole, first: is_disconnected would swallow a part of it
        except ClientDisconnect:
            return dropped(request, started)
        if not await admitted():
            return answered(request, started, dev.gateway.throttled())
        try:
            if await request.is_disconnected():
                # Its client left while it waited for a place: nobody would read the answer.
                return dropped(request, started)
            response = await run_in_threadpool(
                dev.gateway.handle,
                request.method,
                request.url.path,
                dict(request.headers),
                sent.decode("utf-8", errors="replace") if request.method != "GET" else None,
                request.client.host if request.client else "127.0.0.1",
                dict(request.query_params),
                request.headers.get("host", "localhost"),
            )
        finally:
            in_flight.release()
        return answered(request, started, response)

    class EveryMethod:
        """``api`` as a plain ASGI app, which Starlette routes every method to (TRACE, PROPFIND, ...):
        the emulated API Gateway answers a method with no route (403/8001), never Starlette's 405."""

        def __init__(self) -> None:
            self.app = request_response(api)

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            await self.app(scope, receive, send)

    async def watch_outbox() -> None:
        """Print every message once; reading /_local/outbox meanwhile takes none away."""
        while True:
            try:
                for message in dev.outbox.unprinted():
                    _log(printed_line(message))
            except Exception as error:  # keep watching; the next round may succeed
                _log(f"OUTBOX watch failed: {type(error).__name__}")
            await asyncio.sleep(0.2)

    async def every(seconds: float, work: Callable[[], object], failed: str) -> None:
        """``work`` on a worker thread every ``seconds``; a round that fails is logged, the next tried."""
        while True:
            try:
                await run_in_threadpool(work)
            except Exception as error:
                _log(f"{failed}: {type(error).__name__}")
            await asyncio.sleep(seconds)

    def log_workflows() -> Callable[[], None]:
        """Connect batches run in moto's Step Functions (started by uploads): log their executions."""
        from phoneid.dev.workflows import ExecutionLog

        executions = ExecutionLog(dev.stack)

        def changes() -> None:
            for line in executions.changes():
                _log(line)

        return changes

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        tasks = [
            asyncio.create_task(watch_outbox()),
            # Lambda's SQS event source mapping: messages are delivered once they are visible.
            asyncio.create_task(every(1.0, dev.deliver_queued, "WEBHOOK queue poll failed")),
            asyncio.create_task(every(1.0, log_workflows(), "WORKFLOW watch failed")),
            # The rotation's hourly schedule, run every minute here: the local clock may jump days.
            asyncio.create_task(every(60.0, dev.rotate_token_keys, "TOKEN KEYS rotation failed")),
        ]
        yield
        for task in tasks:
            task.cancel()

    return Starlette(
        routes=[
            Route("/_local/clients", local_clients, methods=["POST"]),
            Route("/_local/info", local_info, methods=["GET"]),
            Route("/_local/outbox", local_outbox, methods=["GET"]),
            Route("/_local/clock", local_clock, methods=["POST"]),
            Route("/_local/operator", local_operator, methods=["POST", "DELETE"]),
            Route("/_local/monitor", local_monitor, methods=["POST"]),
            Route("/_local/webhooks/retry", local_webhooks_retry, methods=["POST"]),
            WebSocketRoute("/_ws", websocket_api),
            Route("/_ws-management/@connections/{connection_id}", websocket_management, methods=["POST"]),
            Mount("/sdk", app=StaticFiles(directory=WEB_CLIENT, check_dir=False), name="sdk"),
            *page_routes(dev),
            *demo_routes(dev),
            Route("/{path:path}", EveryMethod()),  # every method, as API Gateway receives them all
        ],
        lifespan=lifespan,
    )


def serve(
    *,
    host: str,
    port: int,
    tier: str,
    region: str,
    base_url: str | None = None,
    connect_transport: str | None = None,
) -> None:
    """Run the local stack until Ctrl-C or SIGTERM. ``base_url`` is what links in SMS and the
    WebSocket URL carry (default: the address it listens on); the state file says how to reach the
    stack while it runs, and goes when it stops."""
    import signal
    import socket

    import uvicorn

    def stop_like_ctrl_c(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    started = time.perf_counter()
    from phoneid.dev.access.recording import install_from_environment

    install_from_environment()  # a test run records the functions' AWS calls (docs/operations.md)
    # uvicorn stops gracefully on SIGTERM, then raises it again for the handler it found: this one
    # ends like Ctrl-C, so the `finally` below runs (the default one would end the process at once).
    signal.signal(signal.SIGTERM, stop_like_ctrl_c)
    # Listening before the slow start: a taken port is said at once, and the state file never names
    # a port that refuses connections while its process lives.
    try:
        listener = socket.create_server(
            (host, port),
            family=socket.AF_INET6 if ":" in host else socket.AF_INET,
            dualstack_ipv6=host == "::" and socket.has_dualstack_ipv6(),  # IPv4 too, as 0.0.0.0 does
        )
    except OSError as error:
        raise OSError(
            error.errno,
            f"cannot listen on {host}:{port} ({os.strerror(error.errno) if error.errno else error}): "
            "stop what uses the port, or choose another (phoneid dev --port N)",
        ) from error
    # Processes on this machine reach a stack listening on every interface at loopback.
    nearby = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)  # noqa: S104
    local_url = f"http://[{nearby}]:{port}" if ":" in nearby else f"http://{nearby}:{port}"
    base_url = base_url or local_url
    dev = DevStack(tier, region, base_url, local_url=local_url, connect_transport=connect_transport)
    announced = False
    try:
        seeded_id = os.environ.get("PHONEID_CLIENT_ID")
        seeded_secret = os.environ.get("PHONEID_CLIENT_SECRET")
        if seeded_id and seeded_secret:
            client = dev.create_client(client_id=seeded_id, client_secret=seeded_secret)
        else:
            client = dev.create_client(name="dev")
        _write_whole(SAM_ENV_VARS, dev.stack.sam_env_vars(dev.moto.endpoint_url))
        _write_whole(STATE_FILE, dev.facts())
        _log(
            f"PhoneID local stack ({tier}, {region}) ready in {time.perf_counter() - started:.1f} s\n"
            f"  API            {base_url}   (token: POST {base_url}/token)\n"
            f"  demo           {base_url}/demo/   (web SDK at {base_url}/sdk/phoneid.js)\n"
            f"  reference      {base_url}/docs   (OpenAPI: {base_url}/openapi.json; this list: {base_url}/)\n"
            f"  outbox         {base_url}/_local/outbox   (SMS and batch emails; also printed below)\n"
            f"  webhooks       POST {base_url}/_local/monitor   "
            "(a change-monitor pass now; docs/webhooks.md)\n"
            f"  {connect_line(dev)}\n"
            f"  AWS (moto)     AWS_ENDPOINT_URL={dev.moto.endpoint_url}\n"
            f"  sam local      sam local start-api --env-vars {_shown_path(SAM_ENV_VARS)} "
            f"--docker-network host --region {dev.stack.aws_region} --port {port + 1}   (Docker; README)\n"
            f"  client_id      {client['client_id']}\n"
            f"  client_secret  {client['client_secret']}\n"
            f"  more clients   POST {base_url}/_local/clients   or   phoneid clients create --local\n"
            f"Press Ctrl-C to stop."
        )
        announced = True
        config = uvicorn.Config(build_app(dev), host=host, port=port, log_level="warning", access_log=False)
        uvicorn.Server(config).run(sockets=[listener])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises Ctrl-C (and SIGTERM) after its graceful shutdown; stopping is expected
    finally:
        # First, as it is quick; and only this stack's file (a stack started since wrote its own).
        with contextlib.suppress(OSError, ValueError):
            if read_state().get("pid") == os.getpid():
                STATE_FILE.unlink()
                SAM_ENV_VARS.unlink(missing_ok=True)  # it names this stack's endpoints
        dev.stop()
        listener.close()
        if announced:  # a stack that never started says only why (the CLI prints it)
            _log("PhoneID local stack stopped.")


def connect_line(dev: DevStack) -> str:
    """The banner's line for Connect: how clients send files with the chosen transport."""
    if dev.sftp is not None:
        return (
            f"SFTP (Connect) sftp -P {dev.sftp.port} CLIENT_NAME@{dev.sftp.host}   "
            "(users: phoneid connect onboard ... --local; docs/connect.md)"
        )
    if dev.connect_transport is ConnectTransport.S3:
        return (
            "Connect (s3)   PUT each file to its URL: phoneid connect upload-url CLIENT_ID FILE --local   "
            "(PHONEID_CONNECT_TRANSPORT=sftp for SFTP; docs/connect.md)"
        )
    return "Connect (none) no client transport: phoneid connect submit FILE --local   (docs/connect.md)"


def _write_whole(path: Path, content: Any) -> None:
    """``content`` as JSON at ``path``, whole at once: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    written = path.with_name(f".{path.name}.{os.getpid()}")
    written.write_text(json.dumps(content, indent=2))
    written.replace(path)


def _shown_path(path: Path) -> str:
    """``path`` as a command run here would name it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def read_state(path: Path | None = None) -> dict[str, Any]:
    """What the last ``phoneid dev`` started here wrote (``DevStack.facts``). A stack that was killed
    leaves it behind: the reader checks that its ``pid`` lives and its ``localUrl`` answers."""
    path = STATE_FILE if path is None else path
    if not path.exists():
        raise FileNotFoundError("no local stack is running here: start it with `make dev` or `phoneid dev`")
    state: dict[str, Any] = json.loads(path.read_text())
    return state
