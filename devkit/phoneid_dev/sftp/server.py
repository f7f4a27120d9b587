"""The SFTP server on its own event loop thread, its host key, and the S3 client it serves from."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import asyncssh
import boto3
from botocore.config import Config

from phoneid_dev.sftp.area import ClientArea
from phoneid_dev.sftp.files import ClientFiles, Log
from phoneid_dev.sftp.logins import ClientLogins, ProfileLookup

DEFAULT_PORT = 2222


def load_host_key(path: Path | None) -> asyncssh.SSHKey:
    """The server's Ed25519 host key, kept at ``path`` (so known_hosts stays valid across runs) or
    new for this run when ``path`` is None."""
    if path is not None and path.exists():
        return asyncssh.read_private_key(str(path))
    key = asyncssh.generate_private_key("ssh-ed25519")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(key.export_private_key())
        path.chmod(0o600)
    return key


class LocalSftpServer:
    """asyncssh on its own event loop thread; ``start()`` returns once it listens."""

    def __init__(
        self,
        lookup: ProfileLookup,
        s3: Any,
        bucket: str,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        host_key: Path | None = None,
        log: Log = lambda line: None,
    ) -> None:
        self.host = host
        self.port = port
        self._lookup = lookup
        self._s3 = s3
        self.bucket = bucket
        self._host_key_path = host_key
        self._log = log
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._acceptor: asyncssh.SSHAcceptor | None = None

    def _files(self, chan: asyncssh.SSHServerChannel[bytes]) -> ClientFiles:
        name = str(chan.get_extra_info("username"))
        return ClientFiles(chan, ClientArea(self._s3, self.bucket, name), self._log)

    async def _listen(self) -> asyncssh.SSHAcceptor:
        return await asyncssh.listen(
            self.host,
            self.port,
            server_host_keys=[load_host_key(self._host_key_path)],
            server_factory=lambda: ClientLogins(self._lookup, self._log),
            sftp_factory=self._files,
            sftp_version=3,
            allow_scp=False,
            agent_forwarding=False,
            allow_pty=False,
            x11_forwarding=False,
            login_timeout=30,
        )

    def start(self) -> LocalSftpServer:
        logging.getLogger("asyncssh").setLevel(logging.WARNING)
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                self._acceptor = loop.run_until_complete(self._listen())
            except BaseException as error:  # reported to start() below
                failure.append(error)
                ready.set()
                return
            ready.set()
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="phoneid-sftp", daemon=True)
        self._thread.start()
        ready.wait(30)
        if failure:
            self._thread.join(5)
            loop.close()
            raise failure[0]
        assert self._acceptor is not None
        self.port = self._acceptor.get_port()
        return self

    def stop(self) -> None:
        loop, acceptor = self._loop, self._acceptor
        if loop is None or acceptor is None or loop.is_closed():
            return

        async def shut() -> None:
            acceptor.close()
            await acceptor.wait_closed()

        try:
            asyncio.run_coroutine_threadsafe(shut(), loop).result(10)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(10)
            loop.close()


def s3_client() -> Any:
    """boto3 S3 for the local stack's moto (in-process in `phoneid dev`): path-style, with retries."""
    config = Config(s3={"addressing_style": "path"}, retries={"mode": "standard", "max_attempts": 3})
    return boto3.client("s3", config=config)
