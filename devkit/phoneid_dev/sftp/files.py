"""The SFTP view of one client: ``/upload`` and ``/download`` over its S3 prefixes; an upload spooled
to a temporary file and stored when the client closes it."""

from __future__ import annotations

import asyncio
import os
import posixpath
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import IO, Any

import asyncssh
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

from phoneid_dev.sftp.area import ClientArea
from phoneid_dev.sftp.paths import AREAS, VirtualPath, resolve

Log = Callable[[str], None]  # a line for the server's log

_WRITABLE = "upload"
_WRITE_FLAGS = FXF_WRITE | FXF_APPEND | FXF_CREAT | FXF_TRUNC | FXF_EXCL
_DIR_MODE = stat.S_IFDIR | 0o555
_UPLOAD_DIR_MODE = stat.S_IFDIR | 0o755
_FILE_MODES = {"upload": stat.S_IFREG | 0o644, "download": stat.S_IFREG | 0o444}


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
