"""The local stack's SFTP server: what Transfer Family is in AWS, on 127.0.0.1 (asyncssh).

Users are the onboarded Connect clients: the login name is the client name and the keys are the
SSH public keys of its profile, read from the profiles store at each login (so a client onboarded
while the stack runs can log in at once; a removed one cannot). Like a Transfer Family user with a
logical home directory, each user sees exactly this tree, backed by the Connect bucket in moto S3:

  /                 the two directories below, nothing else
  /upload/{file}    clients/{name}/upload/{file}     put (one object per upload), get, ls
  /download/{file}  clients/{name}/download/{file}   get, ls (read-only: the service writes here)

No subdirectories, renames, removals, links or other paths; ``..`` cannot climb above ``/``. An
upload is spooled to a temporary file and put into S3 when the client closes it (multipart for large
files), so memory stays bounded whatever the file's size; the object appears — and the batch
workflow starts — once the upload is complete. As in Transfer Family, an upload cut off mid-way is
still closed and stored as it is (the workflow rejects it: its trailer is missing or its count off).
"""

from __future__ import annotations

import asyncio
import logging
import os
import posixpath
import stat
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import asyncssh
import boto3
from asyncssh import (
    FXF_APPEND,
    FXF_CREAT,
    FXF_EXCL,
    FXF_TRUNC,
    FXF_WRITE,
    SFTPAttrs,
    SFTPFailure,
    SFTPName,
    SFTPNoSuchFile,
    SFTPOpUnsupported,
    SFTPPermissionDenied,
)
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

from phoneid.domain.connect import ConnectProfile

ProfileLookup = Callable[[str], ConnectProfile | None]
Log = Callable[[str], None]

DEFAULT_PORT = 2222
AREAS = ("upload", "download")
_WRITABLE = "upload"
_WRITE_FLAGS = FXF_WRITE | FXF_APPEND | FXF_CREAT | FXF_TRUNC | FXF_EXCL
_DIR_MODE = stat.S_IFDIR | 0o555
_UPLOAD_DIR_MODE = stat.S_IFDIR | 0o755
_FILE_MODES = {"upload": stat.S_IFREG | 0o644, "download": stat.S_IFREG | 0o444}


# --- paths --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VirtualPath:
    """Where a client's path points: the root, one of the two areas, or a file in one."""

    area: str | None = None  # None: the root
    name: str | None = None  # None: a directory

    @property
    def is_dir(self) -> bool:
        return self.name is None

    def __str__(self) -> str:
        return "/" + "/".join(part for part in (self.area, self.name) if part)


def resolve(path: bytes) -> VirtualPath:
    """The client's path (relative ones start at ``/``) normalised: ``..`` stops at the root."""
    try:
        text = path.decode("utf-8")
    except UnicodeDecodeError:
        raise SFTPNoSuchFile("No such file") from None
    parts = [part for part in posixpath.normpath(posixpath.join("/", text)).split("/") if part]
    if not parts:
        return VirtualPath()
    if parts[0] not in AREAS or len(parts) > 2 or any(c in parts[-1] for c in "\\\0"):
        raise SFTPNoSuchFile("No such file: only /upload and /download exist")
    return VirtualPath(parts[0], parts[1] if len(parts) == 2 else None)


# --- the S3 side ----------------------------------------------------------------------------------


# Multipart above 8 MiB, two parts in flight: a transfer holds about 16 MiB whatever the file's size.
_MIB = 1024 * 1024
_TRANSFER = TransferConfig(
    multipart_threshold=8 * _MIB, multipart_chunksize=8 * _MIB, max_concurrency=2, max_io_queue=16
)


@dataclass(frozen=True)
class Entry:
    name: str
    size: int
    modified: datetime


@contextmanager
def _missing_is_no_such_file() -> Iterator[None]:
    try:
        yield
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code", ""))
        if code in ("404", "NoSuchKey", "NotFound"):
            raise SFTPNoSuchFile("No such file") from None
        raise SFTPFailure(f"storage error: {code}") from None


@dataclass
class ClientArea:
    """One client's two prefixes of the Connect bucket (blocking boto3 calls: run them in threads)."""

    s3: Any
    bucket: str
    client_name: str

    def key(self, path: VirtualPath) -> str:
        assert path.area is not None
        return f"clients/{self.client_name}/{path.area}/{path.name or ''}"

    def list(self, area: str) -> list[Entry]:
        prefix = f"clients/{self.client_name}/{area}/"
        entries: list[Entry] = []
        with _missing_is_no_such_file():
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix, Delimiter="/"
            )
            for page in pages:
                for item in page.get("Contents", []):
                    name = item["Key"][len(prefix) :]
                    if name:  # a "folder" placeholder object is the directory itself
                        entries.append(Entry(name, int(item["Size"]), item["LastModified"]))
        return entries

    def head(self, path: VirtualPath) -> Entry:
        with _missing_is_no_such_file():
            found = self.s3.head_object(Bucket=self.bucket, Key=self.key(path))
        return Entry(path.name or "", int(found["ContentLength"]), found["LastModified"])

    def download(self, path: VirtualPath, into: IO[bytes]) -> None:
        with _missing_is_no_such_file():
            self.s3.download_fileobj(self.bucket, self.key(path), into, Config=_TRANSFER)

    def upload(self, path: VirtualPath, spool: IO[bytes]) -> None:
        """From the spool file by name: each part is read as it is sent (a file object would be
        read ahead into memory, part after part)."""
        spool.flush()
        with _missing_is_no_such_file():
            self.s3.upload_file(spool.name, self.bucket, self.key(path), Config=_TRANSFER)


# --- the SFTP session ---------------------------------------------------------------------------


@dataclass
class OpenFile:
    path: VirtualPath
    spool: IO[bytes]
    writable: bool
    append: bool = False  # every write goes to the end, whatever its offset
    modified: float = 0.0
    closed: bool = field(default=False)

    def size(self) -> int:
        return self.spool.seek(0, os.SEEK_END)


def _attrs(mode: int, size: int = 0, modified: float | None = None) -> SFTPAttrs:
    return SFTPAttrs(permissions=mode, size=size, uid=0, gid=0, mtime=int(modified or 0), nlink=1)


class ClientFiles(asyncssh.SFTPServer):
    """The SFTP view of one client: ``/upload`` and ``/download`` over its S3 prefixes."""

    def __init__(self, chan: asyncssh.SSHServerChannel[bytes], area: ClientArea, log: Log) -> None:
        super().__init__(chan)
        self._area = area
        self._log = log
        self._began = time.time()

    def _who(self) -> str:
        return self._area.client_name

    def _dir(self, area: str | None) -> SFTPAttrs:
        """The root and the two areas: virtual directories, dated when the session began."""
        return _attrs(_UPLOAD_DIR_MODE if area == _WRITABLE else _DIR_MODE, modified=self._began)

    # --- names and attributes ------------------------------------------------------------------

    def realpath(self, path: bytes) -> bytes:
        return posixpath.normpath(posixpath.join(b"/", path))

    def format_user(self, uid: int | None) -> str:
        return self._who()

    def format_group(self, gid: int | None) -> str:
        return self._who()

    async def stat(self, path: bytes) -> SFTPAttrs:
        where = resolve(path)
        if where.area is None:
            return self._dir(None)
        if where.is_dir:
            return self._dir(where.area)
        entry = await asyncio.to_thread(self._area.head, where)
        return _attrs(_FILE_MODES[where.area], entry.size, entry.modified.timestamp())

    async def lstat(self, path: bytes) -> SFTPAttrs:
        return await self.stat(path)  # nothing here is a link

    def fstat(self, file_obj: object) -> SFTPAttrs:
        assert isinstance(file_obj, OpenFile)
        area = file_obj.path.area or _WRITABLE
        return _attrs(_FILE_MODES[area], file_obj.size(), file_obj.modified)

    def scandir(self, path: bytes) -> AsyncIterator[SFTPName]:
        """Checked when the directory is opened, listed when it is read."""
        where = resolve(path)
        if not where.is_dir:
            raise SFTPFailure("Not a directory")
        return self._names(where)

    async def _names(self, where: VirtualPath) -> AsyncIterator[SFTPName]:
        yield SFTPName(b".", attrs=self._dir(where.area))
        yield SFTPName(b"..", attrs=self._dir(None))
        if where.area is None:
            for area in AREAS:
                yield SFTPName(area.encode(), attrs=self._dir(area))
            return
        for entry in await asyncio.to_thread(self._area.list, where.area):
            mode = _FILE_MODES[where.area]
            yield SFTPName(entry.name.encode(), attrs=_attrs(mode, entry.size, entry.modified.timestamp()))

    # --- files -----------------------------------------------------------------------------------

    async def open(self, path: bytes, pflags: int, attrs: SFTPAttrs) -> OpenFile:
        where = resolve(path)
        if where.is_dir:
            raise SFTPFailure("Is a directory")
        writing = bool(pflags & _WRITE_FLAGS)
        if writing and where.area != _WRITABLE:
            raise SFTPPermissionDenied("Permission denied: only /upload takes files")
        spool = tempfile.NamedTemporaryFile(prefix="phoneid-sftp-")  # noqa: SIM115 - closed with the handle
        try:
            if not writing:
                entry = await asyncio.to_thread(self._area.head, where)
                await asyncio.to_thread(self._area.download, where, spool)
                return OpenFile(where, spool, writable=False, modified=entry.modified.timestamp())
            exists = await asyncio.to_thread(self._exists, where)
            if exists and pflags & FXF_EXCL:
                raise SFTPFailure("File already exists")
            if exists and not pflags & FXF_TRUNC:
                await asyncio.to_thread(self._area.download, where, spool)  # append / resume
            return OpenFile(where, spool, writable=True, append=bool(pflags & FXF_APPEND))
        except BaseException:
            spool.close()
            raise

    def _exists(self, where: VirtualPath) -> bool:
        try:
            self._area.head(where)
        except SFTPNoSuchFile:
            return False
        return True

    def read(self, file_obj: object, offset: int, size: int) -> bytes:
        assert isinstance(file_obj, OpenFile)
        file_obj.spool.seek(offset)
        return file_obj.spool.read(size)

    def write(self, file_obj: object, offset: int, data: bytes) -> int:
        assert isinstance(file_obj, OpenFile)
        if not file_obj.writable:
            raise SFTPPermissionDenied("Permission denied: opened for reading")
        file_obj.spool.seek(0 if file_obj.append else offset, os.SEEK_END if file_obj.append else os.SEEK_SET)
        return file_obj.spool.write(data)

    async def close(self, file_obj: object) -> None:
        assert isinstance(file_obj, OpenFile)
        if file_obj.closed:
            return
        file_obj.closed = True
        try:
            if file_obj.writable:
                size = file_obj.size()
                await asyncio.to_thread(self._area.upload, file_obj.path, file_obj.spool)
                self._log(f"SFTP {self._who()} put {file_obj.path} ({size} bytes)")
            else:
                self._log(f"SFTP {self._who()} get {file_obj.path}")
        finally:
            file_obj.spool.close()

    def fsetstat(self, file_obj: object, attrs: SFTPAttrs) -> None:
        """Times and modes cannot be kept in S3: accepted and ignored, as Transfer Family does."""

    async def setstat(self, path: bytes, attrs: SFTPAttrs) -> None:
        where = resolve(path)
        if where.area != _WRITABLE or where.is_dir:
            raise SFTPPermissionDenied("Permission denied")
        await self.stat(path)  # the file must exist

    def fsync(self, file_obj: object) -> None:
        """The object is written at close."""

    # --- refused ---------------------------------------------------------------------------------

    def remove(self, path: bytes) -> None:
        resolve(path)
        raise SFTPPermissionDenied("Permission denied: files are removed by the service's retention")

    def rename(self, oldpath: bytes, newpath: bytes) -> None:
        raise SFTPPermissionDenied("Permission denied: files cannot be renamed")

    def posix_rename(self, oldpath: bytes, newpath: bytes) -> None:
        raise SFTPPermissionDenied("Permission denied: files cannot be renamed")

    def mkdir(self, path: bytes, attrs: SFTPAttrs) -> None:
        raise SFTPPermissionDenied("Permission denied: only /upload and /download exist")

    def rmdir(self, path: bytes) -> None:
        raise SFTPPermissionDenied("Permission denied: only /upload and /download exist")

    def readlink(self, path: bytes) -> bytes:
        raise SFTPOpUnsupported("No symbolic links here")

    def symlink(self, oldpath: bytes, newpath: bytes) -> None:
        raise SFTPPermissionDenied("Permission denied: no links")

    def link(self, oldpath: bytes, newpath: bytes) -> None:
        raise SFTPPermissionDenied("Permission denied: no links")

    def lsetstat(self, path: bytes, attrs: SFTPAttrs) -> None:
        raise SFTPPermissionDenied("Permission denied")

    def statvfs(self, path: bytes) -> Any:
        raise SFTPOpUnsupported("Not supported")

    def fstatvfs(self, file_obj: object) -> Any:
        raise SFTPOpUnsupported("Not supported")


# --- logins ---------------------------------------------------------------------------------------


class ClientLogins(asyncssh.SSHServer):
    """Public-key logins only, with the keys of the profile whose client name is the user name."""

    def __init__(self, lookup: ProfileLookup, log: Log) -> None:
        self._lookup = lookup
        self._log = log
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn

    async def begin_auth(self, username: str) -> bool:
        try:
            profile = await asyncio.to_thread(self._lookup, username)
        except Exception as error:  # a failing store refuses the login, it does not stop the server
            self._log(f"SFTP login refused: profiles unreadable ({type(error).__name__})")
            profile = None
        keys = "\n".join(profile.ssh_public_keys) if profile else ""
        if keys and self._conn is not None:
            self._conn.set_authorized_keys(asyncssh.import_authorized_keys(keys))
        else:
            self._log(f"SFTP login refused: no Connect client named {username!r}")
        return True  # authentication is always required; without keys none can succeed

    def public_key_auth_supported(self) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        return False

    def host_based_auth_supported(self) -> bool:
        return False


# --- the server ----------------------------------------------------------------------------------


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
