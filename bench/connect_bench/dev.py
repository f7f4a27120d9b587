"""``phoneid dev`` as a subprocess on free ports, and the ``phoneid`` CLI run against it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phoneid_dev.emulation import free_port

BIN = Path(sys.executable).parent


@dataclass
class Dev:
    process: subprocess.Popen[bytes]
    base_url: str
    env: dict[str, str]
    state: dict[str, Any]
    log: Path

    def cli(self, *args: str) -> dict[str, Any]:
        done = subprocess.run(  # noqa: S603 - our own CLI
            [str(BIN / "phoneid"), *args, "--local", "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"phoneid {' '.join(args)}: {done.stderr or done.stdout}")
        data: dict[str, Any] = json.loads(done.stdout)
        return data

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_dev(directory: Path, code: dict[str, str] | None = None) -> Dev:
    """``phoneid dev`` on free ports (HTTP, moto, SFTP), its output in ``dev.log``."""
    import httpx

    port = free_port()
    state_file = directory / "dev.json"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PHONEID_", "MOTO_"))},
        "PHONEID_DEV_STATE": str(state_file),
        "PHONEID_SFTP_PORT": "0",
        **(code or {}),
    }
    log = directory / "dev.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(  # noqa: S603 - our own CLI
            [str(BIN / "phoneid"), "dev", "--port", str(port)], env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300  # a shared, busy machine may take minutes
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"phoneid dev exited: {log.read_text()}")
        try:
            if httpx.get(f"{base_url}/_local/info", timeout=1).status_code == 200:
                return Dev(process, base_url, env, json.loads(state_file.read_text()), log)
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("phoneid dev did not start listening within 300 s")
