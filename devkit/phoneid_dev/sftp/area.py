"""One client's two prefixes of the Connect bucket, as the SFTP session reads and writes them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from asyncssh import (
    SFTPFailure,
    SFTPNoSuchFile,
)
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from phoneid_dev.sftp.paths import VirtualPath

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
