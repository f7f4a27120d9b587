"""`--local` names a local stack: alone, the last one started here (its state file); with a port or
URL, the one answering there (its settings from `GET /_local/info`). A state file left by a stack
that is gone is said and removed."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from phoneid.config import Settings
from phoneid_cli.commands.connect import sftp_address
from phoneid_cli.local_stacks import local_url
from phoneid_cli.main import main, parser
from phoneid_cli.targets import Context, Target
from phoneid_dev.emulation import free_port

# A local stack's functions' environment (its /_local/info says every variable of the settings).
SETTINGS_OF_A_STACK = {
    **{name: f"{name.lower()}-there" for name in Settings.variable_names()},
    "PHONEID_TIER": "sandbox",
    "CONNECT_TRANSPORT": "s3",
    "KEY_INACTIVITY_DAYS": "30",
    "SMS_PER_NUMBER_PER_HOUR": "5",
    "SMS_PER_CLIENT_PER_HOUR": "100",
    "MONITOR_MAX_SEGMENTS": "256",
    "DECISION_RETENTION_DAYS": "1825",
}


@dataclass
class FakeStack:
    """Something answering `GET /_local/info` on loopback, as `phoneid dev` does."""

    url: str
    port: int
    facts: dict[str, Any] = field(default_factory=dict)
    status: int = 200


@pytest.fixture
def fake_stack() -> Iterator[FakeStack]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    url = f"http://127.0.0.1:{port}"
    stack = FakeStack(
        url,
        port,
        {
            "tier": "sandbox",
            "region": "EU",
            "baseUrl": url,
            "localUrl": url,
            "pid": os.getpid(),
            "awsEndpointUrl": "http://127.0.0.1:4599",
            "environment": {
                **SETTINGS_OF_A_STACK,
                "PHONEID_REGION": "EU",
                "CLIENTS_TABLE": "clients-of-the-stack-there",
            },
            "sftp": {"host": "127.0.0.1", "port": 2299, "bucket": "connect"},
        },
    )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path == "/_local/info" and stack.status == 200
            body = json.dumps(stack.facts if found else {"message": "Not Found"}).encode()
            self.send_response(200 if found else stack.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield stack
    server.shutdown()
    server.server_close()


@pytest.fixture
def state_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from phoneid_dev import server

    path = tmp_path / "dev.json"
    monkeypatch.setattr(server, "STATE_FILE", path)
    return path


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell's own settings, which targeting a stack must leave as they are."""
    for name in ("AWS_ENDPOINT_URL", "PHONEID_REGION", "CLIENTS_TABLE"):
        monkeypatch.setenv(name, "before")


def targeted(*argv: str) -> tuple[Any, Context, Target]:
    args = parser().parse_args(["connect", "show", "client-1", *argv])
    context = Context()
    return args, context, context.target(args)


def test_targeting_a_stack_writes_nothing_into_the_environment(
    fake_stack: FakeStack, state_file: Path, environment: None
) -> None:
    # Given a shell whose environment names another stack
    # When a command names the local one
    targeted("--local", fake_stack.url)

    # Then the shell's environment is as it was: the settings are the target's own
    assert {name: os.environ[name] for name in ("AWS_ENDPOINT_URL", "PHONEID_REGION", "CLIENTS_TABLE")} == {
        "AWS_ENDPOINT_URL": "before",
        "PHONEID_REGION": "before",
        "CLIENTS_TABLE": "before",
    }


def test_local_with_a_url_reads_the_settings_of_the_stack_there(
    fake_stack: FakeStack, state_file: Path, environment: None
) -> None:
    # Given a stack answering at a URL, and no state file (it was not the last started)
    # When a command names it
    args, context, target = targeted("--local", fake_stack.url + "/")

    # Then boto3 and the settings point at that stack's AWS and resources, and its SFTP is shown
    assert target.aws_endpoint == "http://127.0.0.1:4599"
    assert target.client("dynamodb").meta.endpoint_url == "http://127.0.0.1:4599"
    assert target.settings.clients_table == "clients-of-the-stack-there"
    assert sftp_address(args, context, "acme") == "sftp -P 2299 acme@127.0.0.1"


def test_the_services_of_a_local_stack_reach_its_aws(
    fake_stack: FakeStack, state_file: Path, environment: None
) -> None:
    from phoneid import bootstrap

    # Given a command naming the stack at a URL
    args, context, _ = targeted("--local", fake_stack.url)

    # When its services are built
    try:
        services = context.services(args)

        # Then they are the stack's: its settings, its tables, and every AWS client at its moto,
        # the client signing Connect's URLs included
        assert services.settings.clients_table == "clients-of-the-stack-there"
        endpoints = {services.dynamodb.meta.endpoint_url, services.s3.meta.endpoint_url}
        endpoints.add(services.presigned_urls._s3.meta.endpoint_url)
        assert endpoints == {"http://127.0.0.1:4599"}
    finally:
        bootstrap.reset()


def test_local_with_a_port_means_that_port_on_this_machine(
    fake_stack: FakeStack, state_file: Path, environment: None
) -> None:
    _, _, target = targeted("--local", str(fake_stack.port))

    assert target.settings.clients_table == "clients-of-the-stack-there"


def test_local_alone_reads_the_stack_of_the_state_file(
    fake_stack: FakeStack, state_file: Path, environment: None
) -> None:
    # Given the state file of a running stack
    state_file.write_text(json.dumps(fake_stack.facts))

    # When a command says --local
    _, _, target = targeted("--local")

    # Then it is that stack, and its file stays
    assert target.settings.clients_table == "clients-of-the-stack-there"
    assert state_file.exists()


def test_a_state_file_whose_process_is_gone_is_said_and_removed(
    fake_stack: FakeStack, state_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a state file left by a stack whose process ended (killed: no clean-up)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    state_file.write_text(json.dumps({**fake_stack.facts, "pid": gone.pid}))

    # When the operator lists the clients
    code = main(["clients", "list", "--local"])

    # Then one line says none runs and how to start one, and the stale file is gone
    assert code == 1
    assert capsys.readouterr().err == (
        f"phoneid: no local stack is running (last one on port {fake_stack.port} stopped): "
        "start it with make dev or phoneid dev\n"
    )
    assert not state_file.exists()


def test_a_state_file_whose_address_refuses_is_said_and_removed(
    state_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a state file naming a port where nothing listens
    port = free_port()
    state_file.write_text(
        json.dumps(
            {
                "baseUrl": f"http://127.0.0.1:{port}",
                "localUrl": f"http://127.0.0.1:{port}",
                "pid": os.getpid(),
            }
        )
    )

    # When the operator lists the clients
    code = main(["clients", "list", "--local"])

    # Then the same line, and the file is removed
    assert code == 1
    assert capsys.readouterr().err == (
        f"phoneid: no local stack is running (last one on port {port} stopped): "
        "start it with make dev or phoneid dev\n"
    )
    assert not state_file.exists()


def test_a_url_where_nothing_listens_says_so(state_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()

    code = main(["clients", "list", "--local", str(port)])

    assert code == 1
    assert capsys.readouterr().err == (
        f"phoneid: no local stack answers at http://127.0.0.1:{port}: start one there "
        f"(phoneid dev --port {port}) or check the address\n"
    )


def test_a_url_of_something_else_says_it_is_not_a_local_stack(
    fake_stack: FakeStack, state_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given another program on the port, answering 404
    fake_stack.status = 404

    code = main(["clients", "list", "--local", fake_stack.url])

    assert code == 1
    assert capsys.readouterr().err == (
        f"phoneid: {fake_stack.url} is not a PhoneID local stack (GET /_local/info answered 404): "
        "check the port\n"
    )


@pytest.mark.parametrize(
    ("argv", "local"),
    [
        (["clients", "list", "--local"], True),
        (["clients", "list", "--local", "3101"], "http://127.0.0.1:3101"),
        (["clients", "list", "--local", "http://192.168.1.20:3000/"], "http://192.168.1.20:3000"),
        (["clients", "list"], None),
        (["connect", "submit", "acme.csv", "--local"], True),
        (["connect", "submit", "acme.csv", "--local", "3101"], "http://127.0.0.1:3101"),
    ],
)
def test_local_takes_an_optional_port_or_url(argv: list[str], local: object) -> None:
    assert parser().parse_args(argv).local == local


def test_the_help_shows_what_local_takes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["clients", "list", "-h"])

    shown = " ".join(capsys.readouterr().out.split())
    assert "--local [PORT|URL]" in shown
    assert "alone, the last one started here (make dev)" in shown
    assert "with a port or URL (3101, http://127.0.0.1:3101), the one there" in shown


@pytest.mark.parametrize("written", ["²", "١٢٣", "3" * 5000, "0" * 5000 + "3101"])
def test_a_local_port_of_other_digits_or_thousands_of_them_is_refused_with_its_message(written: str) -> None:
    # Given --local's value written in digits int() refuses, or more digits than it reads
    # When parsed / Then it is refused with the option's own message, not a ValueError
    with pytest.raises(argparse.ArgumentTypeError, match="is not a port or URL of a local stack"):
        local_url(written)
