"""moto as the local AWS: in-process for this process, and a threaded server on loopback that other
processes reach by endpoint URL.
"""

from __future__ import annotations

import logging
import os
import socket

from phoneid_dev.patches import apply_all

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class MotoServer:
    """moto's threaded server on loopback for other processes (by endpoint URL), and moto's
    in-process mock over the same backends for this one."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> MotoServer:
        # moto takes seconds to import: only once a stack starts (the CLI imports this module too).
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per AWS call is noise here
        apply_all()
        for name, value in FAKE_CREDENTIALS.items():
            os.environ.setdefault(name, value)
        # moto's own internal calls (e.g. Step Functions invoking services) go to MOTO_PORT.
        os.environ["MOTO_PORT"] = str(self.port)
        # This process (handlers, workflow tasks, SFTP) calls the same backends in-process, as the
        # tests do; HTTP, which moto's server answers on a new connection and thread per call, is
        # for other processes (the CLI, benches, the SDKs' tools).
        from moto import mock_aws

        os.environ.pop("AWS_ENDPOINT_URL", None)  # one inherited from another stack would win
        self._mock = mock_aws()
        self._mock.start()
        self._server = ThreadedMotoServer(ip_address=self.host, port=self.port, verbose=False)
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
        self._mock.stop()
