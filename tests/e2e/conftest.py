"""The local stack as a user starts it (`phoneid dev` in its own process), driven over real HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from phoneid_dev.access.recording import child_environment
from phoneid_dev.emulation import free_port
from phoneid_dev.gateway import HttpResponse
from tests.harness import Credentials, Integrator

BIN = Path(sys.executable).parent


@dataclass
class DevServer:
    process: subprocess.Popen[str]
    base_url: str
    state_file: Path
    env: dict[str, str]
    log: Path  # the stack's output (a file: a pipe nobody reads would fill and block the stack)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603 - our own CLI
            [str(BIN / "phoneid"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def state(self) -> dict[str, Any]:
        """What the stack wrote to its state file: its URLs, credentials and servers."""
        loaded: dict[str, Any] = json.loads(self.state_file.read_text())
        return loaded

    def onboard_connect_client(
        self, prefix: str, client: dict[str, Any], *options: str
    ) -> tuple[str, str, str]:
        """A new client of the stack (``POST /_local/clients`` with ``client``), onboarded to Connect as
        the operator does it (`phoneid connect onboard ... --name prefix-xxxxxxxx --email ...` and
        ``options``): its id, its name (file-name prefix, S3 prefix and SFTP user) and enroll key."""
        created = httpx.post(f"{self.base_url}/_local/clients", json=client, timeout=30)
        assert created.status_code == 201, created.text
        client_id: str = created.json()["client_id"]
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        onboarded = self.cli(
            "connect", "onboard", client_id, "--name", name, "--email", f"ops@{prefix}.example",
            *options, "--local", "--json",
        )  # fmt: skip
        assert onboarded.returncode == 0, onboarded.stderr
        enroll_key: str = json.loads(onboarded.stdout)["enroll_key"]
        return client_id, name, enroll_key

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)
        return self.process.returncode, self.output()


def start_dev_server(tmp: Path, *options: str, **env: str) -> DevServer:
    """``phoneid dev`` with ``options`` and ``env``, its state file and output in ``tmp``."""
    port = free_port()
    state_file = tmp / "dev.json"
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PHONEID_", "MOTO_"))},
        "PHONEID_DEV_STATE": str(state_file),
        **child_environment(),  # the stack's functions' AWS calls recorded for the IAM check
        **env,
    }
    log = tmp / "dev.log"
    with log.open("w") as sink:
        process = subprocess.Popen(  # noqa: S603 - our own CLI
            [str(BIN / "phoneid"), "dev", "--port", str(port), *options],
            env=environment,
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
        )
    server = DevServer(process, f"http://127.0.0.1:{port}", state_file, environment, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"phoneid dev exited: {server.output()}")
        try:
            if httpx.get(f"{server.base_url}/_local/info", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.2)  # waiting for a process to listen, not timing the code under test
    process.kill()
    raise RuntimeError("phoneid dev did not start listening within 60 s")


CLIENT_ID = "e2e-client-0001"
CLIENT_SECRET = "e2e-secret-that-is-long-enough-0001"


@pytest.fixture(scope="session")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    server = start_dev_server(
        tmp_path_factory.mktemp("dev"), PHONEID_CLIENT_ID=CLIENT_ID, PHONEID_CLIENT_SECRET=CLIENT_SECRET
    )
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture
def http(dev_server: DevServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=dev_server.base_url, timeout=30) as client:
        yield client


class HttpApi:
    """The tests' ``Transport`` over real HTTP to a running ``phoneid dev``."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.public_base_url = str(http.base_url).rstrip("/")

    @staticmethod
    def _answer(response: httpx.Response) -> HttpResponse:
        return HttpResponse(response.status_code, dict(response.headers), response.text)

    def post(self, path: str, body: Any, *, token: str | None = None, **headers: str) -> HttpResponse:
        sent = {name.replace("_", "-"): value for name, value in headers.items()}
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        return self._answer(self.http.post(path, json=body, headers=sent))

    def get(self, url: str) -> HttpResponse:
        assert url.startswith(self.public_base_url), url
        return self._answer(self.http.get(url.removeprefix(self.public_base_url)))

    def token(self, credentials: Credentials) -> str:
        response = self.http.post("/token", data=credentials.token_form())
        assert response.status_code == 200, response.text
        return str(response.json()["access_token"])

    def outbox(self, to: str | None = None) -> list[dict[str, str]]:
        messages: list[dict[str, str]] = self.http.get("/_local/outbox").json()
        return [message for message in messages if to is None or message["to"] == to]

    def integrator(self, **spec: Any) -> Integrator:
        """A new client of the running stack (``POST /_local/clients``)."""
        created = self.http.post("/_local/clients", json=spec)
        assert created.status_code == 201, created.text
        return Integrator(self, Credentials(created.json()["client_id"], created.json()["client_secret"]))


@pytest.fixture
def remote(http: httpx.Client) -> HttpApi:
    return HttpApi(http)
