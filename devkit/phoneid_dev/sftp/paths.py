"""What a client's path points at: the root, ``/upload`` or ``/download``, or a file in one;
``..`` stops at the root and nothing else exists."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from asyncssh import (
    SFTPNoSuchFile,
)

AREAS = ("upload", "download")


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
