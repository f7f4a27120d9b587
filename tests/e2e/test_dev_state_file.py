"""The state file of `phoneid dev` (how `--local` finds the last stack started): it says what
`GET /_local/info` says, goes when the stack stops (Ctrl-C or SIGTERM), and a file left by a killed
stack is said to be stale and removed. `--local PORT|URL` reaches a stack without it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from phoneid_dev.emulation import free_port
from tests.e2e.conftest import BIN, CLIENT_ID, DevServer, start_dev_server

pytestmark = pytest.mark.e2e


def phoneid(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own CLI
        [str(BIN / "phoneid"), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_sigterm_stops_the_stack_and_removes_its_state_file(tmp_path: Path) -> None:
    # Given a running stack, its state file and its env-vars file for `sam local`
    server = start_dev_server(tmp_path, PHONEID_SFTP_PORT="0")
    env_vars = server.state_file.with_name("sam-env-vars.json")
    assert server.state_file.exists()
    assert env_vars.exists()

    # When it is sent SIGTERM (as a service manager or `kill` stops it)
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=30)
    output = server.output()

    # Then it stops as on Ctrl-C: exit code 0, and both files are gone (they name its endpoints)
    assert server.process.returncode == 0
    assert "PhoneID local stack stopped." in output
    assert not server.state_file.exists()
    assert not env_vars.exists()


def test_the_state_file_says_what_local_info_says(dev_server: DevServer) -> None:
    state = json.loads(dev_server.state_file.read_text())
    info = httpx.get(f"{dev_server.base_url}/_local/info", timeout=30).json()

    assert info == state
    assert state["pid"] == dev_server.process.pid
    assert state["localUrl"] == dev_server.base_url
    assert {"awsEndpointUrl", "environment", "sftp", "tier", "region"} <= set(state)


def test_a_killed_stack_leaves_a_file_the_cli_calls_stale(tmp_path: Path) -> None:
    # Given a stack killed without a chance to clean up
    server = start_dev_server(tmp_path, PHONEID_SFTP_PORT="0")
    port = server.base_url.rsplit(":", 1)[1]
    server.process.kill()
    server.process.wait(timeout=30)
    assert server.state_file.exists()

    # When the operator lists the clients of the local stack
    listed = server.cli("clients", "list", "--local")

    # Then one line says none runs, which port stopped and how to start one; the file is removed
    assert listed.returncode == 1
    assert listed.stderr == (
        f"phoneid: no local stack is running (last one on port {port} stopped): "
        "start it with make dev or phoneid dev\n"
    )
    assert not server.state_file.exists()


def test_local_reaches_a_stack_by_its_port_or_url(dev_server: DevServer, tmp_path: Path) -> None:
    # Given no state file for it (another stack was started since, or it was started elsewhere)
    env = {**dev_server.env, "PHONEID_DEV_STATE": str(tmp_path / "elsewhere.json")}
    port = dev_server.base_url.rsplit(":", 1)[1]

    # When the operator names it by URL, then by port
    by_url = phoneid(env, "clients", "list", "--local", dev_server.base_url, "--json")
    by_port = phoneid(env, "clients", "list", "--json", "--local", port)

    # Then both list that stack's clients (its seeded one among them)
    assert by_url.returncode == 0, by_url.stderr
    assert by_port.returncode == 0, by_port.stderr
    assert CLIENT_ID in {c["client_id"] for c in json.loads(by_url.stdout)}
    assert json.loads(by_port.stdout) == json.loads(by_url.stdout)


def test_a_short_seeded_secret_is_one_line_and_starts_nothing(tmp_path: Path) -> None:
    # Given seeded credentials whose secret is too short
    state_file = tmp_path / "dev.json"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PHONEID_", "MOTO_"))},
        "PHONEID_DEV_STATE": str(state_file),
        "PHONEID_SFTP_PORT": "0",
        "PHONEID_CLIENT_ID": "e2e-short-secret",
        "PHONEID_CLIENT_SECRET": "too-short",
    }

    # When the stack is started (as make dev does)
    started = phoneid(env, "dev", "--port", str(free_port()), timeout=120)

    # Then one line names the variable and what to do; no stack is left behind
    assert started.returncode == 2
    assert started.stderr == (
        "phoneid: PHONEID_CLIENT_SECRET: a client secret must have at least 32 characters: set a longer "
        "one, or unset PHONEID_CLIENT_ID and PHONEID_CLIENT_SECRET to have credentials made up\n"
    )
    assert not state_file.exists()


def test_a_taken_port_is_one_line_at_once(tmp_path: Path) -> None:
    # Given something already listening on the port
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PHONEID_", "MOTO_"))},
            "PHONEID_DEV_STATE": str(tmp_path / "dev.json"),
        }

        # When the stack is started on it
        started = phoneid(env, "dev", "--port", str(port))

    # Then one line says so and what to do, before anything else starts
    assert started.returncode == 1
    assert started.stderr == (
        f"phoneid: cannot listen on 127.0.0.1:{port} (Address already in use): stop what uses the port, "
        "or choose another (phoneid dev --port N)\n"
    )
    assert not (tmp_path / "dev.json").exists()
