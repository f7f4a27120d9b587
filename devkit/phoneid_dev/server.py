"""``phoneid dev``: the whole stack on 127.0.0.1 with no Docker and no AWS account.

An HTTP server turns requests into API Gateway REST proxy events and runs the authorizers and the
handlers of ``template.yaml`` in this process; it also serves the WebSocket API (and its management
endpoint, which handlers reach through boto3 as they would in AWS), the web SDK and a demo
integrator. AWS is moto's server, which other processes (the ``phoneid`` CLI, the AWS CLI) reach at
the printed endpoint. Every SMS and email is printed and listed at ``/_local/outbox``. Connect
batches run as in AWS: an upload starts the state machine (moto's Step Functions, its Lambda tasks
run by the handlers in worker processes of their own; ``phoneid_dev.workflows``,
``phoneid_dev.processes``), and each execution is logged.

This module listens and announces; the rooms behind it: ``devstack`` (moto, the template and the
gateway), ``app`` (the routes: ``admin``, ``websocket_api``, ``pages``, ``demo``, ``gateway_route``
behind ``admission``), ``background`` (what runs on its own) and ``statefile``.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import time
from pathlib import Path
from typing import Any

from phoneid.domain.connect import ConnectTransport
from phoneid_dev.access.recording.hooks import install_from_environment
from phoneid_dev.app import build_app
from phoneid_dev.background import SAVE_SECONDS
from phoneid_dev.console import log
from phoneid_dev.devstack import DevStack
from phoneid_dev.snapshot.directory import DataDirectory
from phoneid_dev.statefile import (
    default_state_file,
    remove_if_ours,
    sam_env_vars_beside,
    write_whole,
)
from phoneid_dev.statefile import read_state as read_state_file
from phoneid_dev.template import template_path

__all__ = ["SAM_ENV_VARS", "STATE_FILE", "DevStack", "build_app", "connect_line", "read_state", "serve"]

# Where a running stack tells other processes (the CLI with --local) how to reach it.
STATE_FILE = default_state_file()
# Beside it, what `sam local start-api --env-vars` takes to run the functions against this stack (README).
SAM_ENV_VARS = sam_env_vars_beside(STATE_FILE)


def read_state(path: Path | None = None) -> dict[str, Any]:
    """What the last ``phoneid dev`` started here wrote (``DevStack.facts``; ``phoneid_dev.statefile``)."""
    return read_state_file(STATE_FILE if path is None else path)


def serve(
    *,
    host: str,
    port: int,
    tier: str,
    region: str,
    base_url: str | None = None,
    connect_transport: str | None = None,
    data: Path | None = None,
) -> None:
    """Run the local stack until Ctrl-C or SIGTERM. ``base_url`` is what links in SMS and the
    WebSocket URL carry (default: the address it listens on); the state file says how to reach the
    stack while it runs, and goes when it stops. With ``data``, the stack starts from what that
    directory kept and keeps its state there (``phoneid_dev.snapshot``); without, it starts empty
    and nothing is read or written."""
    # uvicorn only when a stack is served: the CLI imports this module to read the state file.
    import uvicorn

    started = time.perf_counter()
    # The repository first: outside one, RepositoryNotFound says how to name it before anything starts.
    template_path()
    install_from_environment()  # a test run records the functions' AWS calls (docs/operations.md)
    # uvicorn stops gracefully on SIGTERM, then raises it again for the handler it found: this one
    # ends like Ctrl-C, so the `finally` below runs (the default one would end the process at once).
    signal.signal(signal.SIGTERM, _stop_like_ctrl_c)
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
    try:
        dev = DevStack(
            tier,
            region,
            base_url,
            local_url=local_url,
            connect_transport=connect_transport,
            data=DataDirectory(data) if data is not None else None,
        )
    except BaseException:
        listener.close()
        raise
    announced = False
    try:
        client = dev.banner_client(
            os.environ.get("PHONEID_CLIENT_ID"), os.environ.get("PHONEID_CLIENT_SECRET")
        )
        dev.save_data()  # the banner's client kept from the start (and the directory proven writable)
        write_whole(SAM_ENV_VARS, dev.stack.sam_env_vars(dev.moto.endpoint_url))
        write_whole(STATE_FILE, dev.facts())
        log(_banner(dev, client, port, time.perf_counter() - started))
        announced = True
        config = uvicorn.Config(build_app(dev), host=host, port=port, log_level="warning", access_log=False)
        uvicorn.Server(config).run(sockets=[listener])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises Ctrl-C (and SIGTERM) after its graceful shutdown; stopping is expected
    finally:
        # First, as it is quick; and only this stack's file (a stack started since wrote its own).
        remove_if_ours(STATE_FILE)
        if announced and dev.data is not None:  # a stack that never started has nothing new to keep
            _save_at_stop(dev, dev.data.path)
        dev.stop()
        listener.close()
        if announced:  # a stack that never started says only why (the CLI prints it)
            log("PhoneID local stack stopped.")


def _save_at_stop(dev: DevStack, directory: Path) -> None:
    """The last save, said; one that fails is said too, and the stack still stops (the snapshot
    written before it stays whole: ``phoneid_dev.snapshot.directory``)."""
    shown = _shown_path(directory)
    try:
        dev.save_data()
    except Exception as error:
        log(f"State NOT saved to {shown} ({type(error).__name__}: {error}): it holds the last save before")
        return
    log(f"State kept in {shown} (phoneid dev --data {shown} starts from it).")


def _stop_like_ctrl_c(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _banner(dev: DevStack, client: dict[str, str], port: int, seconds: float) -> str:
    """What the stack says once it is ready: where everything is, and the first client's credentials."""
    base_url = dev.base_url
    return (
        f"PhoneID local stack ({dev.tier}, {dev.region}) ready in {seconds:.1f} s\n"
        f"  API            {base_url}   (token: POST {base_url}/token)\n"
        f"  demo           {base_url}/demo/   (web SDK at {base_url}/sdk/phoneid.js)\n"
        f"  console        {base_url}/console   (requests, flows, SMS, Connect batches and webhooks, live)\n"
        f"  reference      {base_url}/docs   (OpenAPI: {base_url}/openapi.json; this list: {base_url}/)\n"
        f"  outbox         {base_url}/_local/outbox   (SMS and batch emails; also printed below)\n"
        f"  webhooks       POST {base_url}/_local/monitor   "
        "(a change-monitor pass now; docs/webhooks.md)\n"
        f"  {connect_line(dev)}\n"
        f"  AWS (moto)     AWS_ENDPOINT_URL={dev.moto.endpoint_url}\n"
        f"  sam local      sam local start-api --env-vars {_shown_path(SAM_ENV_VARS)} "
        f"--docker-network host --region {dev.stack.aws_region} --port {port + 1}   (Docker; README)\n"
        f"{_data_line(dev)}"
        f"  client_id      {client['client_id']}\n"
        f"  client_secret  {client['client_secret']}\n"
        f"  more clients   POST {base_url}/_local/clients   or   phoneid clients create --local\n"
        "For the README's curl examples and docs/http/phoneid.http, paste into another shell:\n"
        f"{exports(dev.local_url, client)}\n"
        f"Press Ctrl-C to stop."
    )


def _data_line(dev: DevStack) -> str:
    """The banner's line for ``--data``: where the state is kept (none without it)."""
    if dev.data is None:
        return ""
    return (
        f"  data           {_shown_path(dev.data.path)}   (clients, identities, Connect and webhooks kept "
        f"there: every {SAVE_SECONDS:.0f} s and at Ctrl-C)\n"
    )


def exports(local_url: str, client: dict[str, str]) -> str:
    """The line that sets the README's variables (``B``, ``ID``, ``SECRET``) in a shell on this machine;
    each value quoted, as a seeded secret may hold any character."""
    values = {"B": local_url, "ID": client["client_id"], "SECRET": client["client_secret"]}
    return "export " + " ".join(f"{name}={shlex.quote(value)}" for name, value in values.items())


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


def _shown_path(path: Path) -> str:
    """``path`` as a command run here would name it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
