"""``phoneid dev``: the whole stack on 127.0.0.1 with no Docker and no AWS account.

An HTTP server turns requests into API Gateway REST proxy events and runs the authorizer and the
handlers of ``template.yaml`` in this process; AWS is moto's server, which other processes (the
``phoneid`` CLI, the AWS CLI) reach at the printed endpoint.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from phoneid.dev.emulation import MotoServer
from phoneid.dev.gateway import LocalGateway
from phoneid.dev.stack import LocalStack
from phoneid.dev.template import ROOT

# Where a running stack tells other processes (the CLI with --local) how to reach it.
STATE_FILE = Path(os.environ.get("PHONEID_DEV_STATE", ROOT / ".phoneid" / "dev.json"))


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class DevStack:
    """moto, the provisioned template and the gateway: everything but the HTTP listener."""

    def __init__(self, tier: str, region: str, moto_port: int | None = None) -> None:
        self.moto = MotoServer(moto_port).start()
        self.stack = LocalStack(
            parameters={"Tier": tier, "Region": region, "LogLevel": "WARNING"}
        ).provision()
        os.environ.update(self.stack.environment())
        os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
        from phoneid import bootstrap

        bootstrap.reset()
        self.tier, self.region = tier, region
        self.gateway = LocalGateway(self.stack)

    def create_client(self, **spec: Any) -> dict[str, str]:
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
        return {"client_id": created.client.client_id, "client_secret": created.client_secret}

    def stop(self) -> None:
        self.moto.stop()


def build_app(dev: DevStack) -> Any:
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

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
        return JSONResponse({"tier": dev.tier, "region": dev.region, "awsEndpointUrl": dev.moto.endpoint_url})

    async def api(request: Request) -> Response:
        started = time.perf_counter()
        body = (await request.body()).decode("utf-8", errors="replace") if request.method != "GET" else None
        response = await run_in_threadpool(
            dev.gateway.handle,
            request.method,
            request.url.path,
            dict(request.headers),
            body,
            request.client.host if request.client else "127.0.0.1",
        )
        code = ""
        if response.status >= 400:
            try:
                code = f" code={response.json().get('code')}"
            except ValueError:
                code = ""
        elapsed = (time.perf_counter() - started) * 1000
        _log(f"{request.method} {request.url.path} -> {response.status}{code} ({elapsed:.0f} ms)")
        return Response(response.body, status_code=response.status, headers=dict(response.headers))

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    return Starlette(
        routes=[
            Route("/_local/clients", local_clients, methods=["POST"]),
            Route("/_local/info", local_info, methods=["GET"]),
            Route("/{path:path}", api, methods=methods),
        ]
    )


def serve(*, host: str, port: int, tier: str, region: str) -> None:
    import uvicorn

    started = time.perf_counter()
    dev = DevStack(tier, region)
    seeded_id, seeded_secret = os.environ.get("PHONEID_CLIENT_ID"), os.environ.get("PHONEID_CLIENT_SECRET")
    if seeded_id and seeded_secret:
        client = dev.create_client(client_id=seeded_id, client_secret=seeded_secret)
    else:
        client = dev.create_client(name="dev")
    base_url = f"http://{host}:{port}"
    STATE_FILE.parent.mkdir(parents=True, exist_ok=True)
    STATE_FILE.write_text(
        json.dumps(
            {
                "baseUrl": base_url,
                "awsEndpointUrl": dev.moto.endpoint_url,
                "environment": dev.stack.environment(),
            },
            indent=2,
        )
    )
    _log(
        f"PhoneID local stack ({tier}, {region}) ready in {time.perf_counter() - started:.1f} s\n"
        f"  API            {base_url}   (token: POST {base_url}/token)\n"
        f"  AWS (moto)     AWS_ENDPOINT_URL={dev.moto.endpoint_url}\n"
        f"  client_id      {client['client_id']}\n"
        f"  client_secret  {client['client_secret']}\n"
        f"  more clients   POST {base_url}/_local/clients   or   phoneid clients create --local\n"
        f"Press Ctrl-C to stop."
    )
    config = uvicorn.Config(build_app(dev), host=host, port=port, log_level="warning", access_log=False)
    try:
        uvicorn.Server(config).run()
    except KeyboardInterrupt:
        pass  # uvicorn re-raises Ctrl-C after its graceful shutdown; stopping is the expected outcome
    finally:
        dev.stop()
        STATE_FILE.unlink(missing_ok=True)
        _log("PhoneID local stack stopped.")


def read_state(path: Path = STATE_FILE) -> dict[str, Any]:
    if not path.exists():
        raise FileNotFoundError("no local stack is running here: start it with `make dev` or `phoneid dev`")
    state: dict[str, Any] = json.loads(path.read_text())
    return state
