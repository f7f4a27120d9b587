"""moto as the local AWS: in-process (tests) or as a server a second process can reach (``phoneid dev``).

One fidelity fix: DynamoDB applies each single-item write atomically, condition included. moto
evaluates the condition and writes in Python without a lock, so under threads two conditional
writes could in principle both pass. The local stack serialises those writes, as DynamoDB would.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

_WRITE_OPERATIONS = ("put_item", "update_item", "delete_item", "transact_write_items")
_write_lock = threading.RLock()
_patched = False

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def atomic_dynamodb_writes() -> None:
    global _patched
    if _patched:
        return
    from moto.dynamodb.models import DynamoDBBackend

    def serialised(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _write_lock:
                return method(*args, **kwargs)

        return wrapper

    for name in _WRITE_OPERATIONS:
        setattr(DynamoDBBackend, name, serialised(getattr(DynamoDBBackend, name)))
    _patched = True


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class MotoServer:
    """moto's threaded server on loopback; boto3 in this process and others reach it by endpoint URL."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> MotoServer:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per AWS call is noise here
        atomic_dynamodb_writes()
        for name, value in FAKE_CREDENTIALS.items():
            os.environ.setdefault(name, value)
        # moto's own internal calls (e.g. Step Functions invoking services) go to MOTO_PORT.
        os.environ["MOTO_PORT"] = str(self.port)
        os.environ["AWS_ENDPOINT_URL"] = self.endpoint_url
        self._server = ThreadedMotoServer(ip_address=self.host, port=self.port, verbose=False)
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
