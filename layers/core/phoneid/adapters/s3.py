"""The Connect bucket (``ObjectStore``): batch files read as streamed text lines, results written in
parts, so no file is ever held whole in memory (an 800,000-row file is ~80 MB; the steps run in 1 GB).

Reading: UTF-8 with or without a byte-order mark; CRLF, LF (or a lone CR) end a line; the line
ends are not part of the lines, and a final line without one is still a line. ``iter_text`` gives
the decoded text in pieces instead, line ends included, for a reader that finds the records itself
(an uploaded file, whose lines may be of any length). Both take time linear in the object's size
and hold one read chunk (``iter_lines``: also the current line). Bytes that are not
UTF-8 raise ``UnicodeDecodeError`` (a ``ValueError``) where they are met: the caller rejects the
file. A key (or version) that does not exist raises ``ObjectNotFound`` (a ``KeyError``).

Writing: ``open_writer`` buffers text and uploads it in parts of ``part_size`` bytes (S3's minimum
is 5 MiB, except for the last); an object small enough for one part is a single PutObject. The
object appears when the writer is closed; an abandoned writer (an exception inside ``with``)
aborts its multipart upload. Objects are encrypted by the bucket's default (SSE-KMS, its own key).

Provider failures become ``InternalError`` (8000) raised from the ``ClientError``, marked
``throttled`` when S3 was throttling (``SlowDown``: ``phoneid.adapters.throttling``), so a Connect
chunk is retried.
"""

from __future__ import annotations

import codecs
import contextlib
import re
from collections.abc import Iterable, Iterator
from itertools import chain
from types import TracebackType
from typing import Any

from botocore.exceptions import ClientError

from phoneid.adapters.aws import error_code, provider_errors

_READ_CHUNK = 64 * 1024
_PART_SIZE = 8 * 1024 * 1024
_MIN_PART_SIZE = 5 * 1024 * 1024
_DELETE_BATCH = 1000  # DeleteObjects' limit
_END_OF_LINE = re.compile(r"\r\n|\r|\n")
_NOT_FOUND = {"NoSuchKey", "NoSuchVersion", "404", "NotFound"}
_CONTENT_TYPES = {
    ".csv": "text/csv; charset=utf-8",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
}


class ObjectNotFound(KeyError):
    """No object (or no such version of it) under the key."""


def _content_type(key: str) -> str:
    for suffix, content_type in _CONTENT_TYPES.items():
        if key.endswith(suffix):
            return content_type
    return "text/plain; charset=utf-8"


def split_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Text lines of a byte stream: UTF-8 (a leading BOM dropped), any of CRLF, LF, CR ending a line.

    Each character is looked at once: a line's pieces wait in a list until its end arrives (joining
    a growing string at every chunk, and searching it again from its start, made a long line cost
    the square of its length). A CR at the end of one chunk waits for the next, so a CRLF split
    across chunks is one line end.
    """
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="strict")
    parts: list[str] = []  # the current line's text so far
    pending_cr = False  # the previous text ended with a CR that ended a line
    for text in chain((decoder.decode(chunk) for chunk in chunks), [decoder.decode(b"", final=True)]):
        start = 0
        if pending_cr and text:
            pending_cr = False
            if text.startswith("\n"):
                start = 1
        for found in _END_OF_LINE.finditer(text, start):
            parts.append(text[start : found.start()])
            yield "".join(parts)
            parts = []
            start = found.end()
            pending_cr = found.group() == "\r" and start == len(text)
        if start < len(text):
            parts.append(text[start:])
    if parts:
        yield "".join(parts)  # a last line without a line end


def iter_text(chunks: Iterable[bytes]) -> Iterator[str]:
    """The text of a byte stream in pieces as they are decoded: UTF-8, a leading BOM dropped."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="strict")
    for chunk in chunks:
        text = decoder.decode(chunk)
        if text:
            yield text
    text = decoder.decode(b"", final=True)
    if text:
        yield text


class S3ObjectStore:
    def __init__(self, s3: Any, bucket: str, part_size: int = _PART_SIZE) -> None:
        if part_size < _MIN_PART_SIZE:
            raise ValueError("S3 parts (except the last) are 5 MiB or more")
        self._s3 = s3
        self.bucket = bucket
        self._part_size = part_size

    # --- reads -----------------------------------------------------------------------------------

    def _get(self, key: str, version_id: str | None) -> Any:
        with provider_errors("Connect file read"):
            try:
                return self._s3.get_object(
                    Bucket=self.bucket, Key=key, **({"VersionId": version_id} if version_id else {})
                )
            except ClientError as error:
                if error_code(error) in _NOT_FOUND:
                    raise ObjectNotFound(key) from error
                raise

    def iter_lines(self, key: str, version_id: str | None = None) -> Iterator[str]:
        """The object's text lines, read as a stream (``version_id``: that version, else the latest)."""
        body = self._get(key, version_id)["Body"]
        try:
            with provider_errors("Connect file read"):
                yield from split_lines(body.iter_chunks(_READ_CHUNK))
        finally:
            body.close()

    def iter_text(self, key: str, version_id: str | None = None) -> Iterator[str]:
        """The object's text in pieces of at most ``_READ_CHUNK`` characters, line ends as they are."""
        body = self._get(key, version_id)["Body"]
        try:
            with provider_errors("Connect file read"):
                yield from iter_text(body.iter_chunks(_READ_CHUNK))
        finally:
            body.close()

    def get_text(self, key: str) -> str:
        body = self._get(key, None)["Body"]
        try:
            with provider_errors("Connect file read"):
                data: bytes = body.read()
        finally:
            body.close()
        return data.decode("utf-8-sig")

    def exists(self, key: str) -> bool:
        """Whether an object is under ``key``: listed, not asked for. S3 tells a missing object apart
        (404, not 403) only to a caller who may list the whole bucket; a listing needs no more than
        the prefix, and the functions may list ``work/`` only (template.yaml)."""
        with provider_errors("Connect file check"):
            listed = self._s3.list_objects_v2(Bucket=self.bucket, Prefix=key, MaxKeys=1)
        # Keys list in order: one equal to the prefix comes first.
        return any(item["Key"] == key for item in listed.get("Contents", []))

    # --- writes ----------------------------------------------------------------------------------

    def put_text(self, key: str, text: str) -> None:
        with provider_errors("Connect file write"):
            self._s3.put_object(
                Bucket=self.bucket, Key=key, Body=text.encode("utf-8"), ContentType=_content_type(key)
            )

    def open_writer(self, key: str) -> S3TextSink:
        return S3TextSink(self._s3, self.bucket, key, self._part_size)

    def delete_prefix(self, prefix: str) -> int:
        """Delete every object under ``prefix`` (the latest versions; lifecycle removes older ones)."""
        if not prefix:
            raise ValueError("refusing to delete the whole bucket")
        deleted = 0
        with provider_errors("Connect work cleanup"):
            pages = self._s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix, PaginationConfig={"PageSize": _DELETE_BATCH}
            )
            for page in pages:
                keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
                if not keys:
                    continue
                answer = self._s3.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
                deleted += len(keys) - len(answer.get("Errors", []))
        return deleted


class S3TextSink:
    """Text written in parts of a multipart upload; a single PutObject when it all fits in one part."""

    def __init__(self, s3: Any, bucket: str, key: str, part_size: int) -> None:
        self._s3 = s3
        self._bucket = bucket
        self._key = key
        self._part_size = part_size
        self._buffer = bytearray()
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []
        self._closed = False

    def write(self, text: str) -> None:
        if self._closed:
            raise ValueError(f"writer of {self._key} is closed")
        self._buffer += text.encode("utf-8")
        while len(self._buffer) >= self._part_size:
            part = bytes(self._buffer[: self._part_size])
            del self._buffer[: self._part_size]
            self._upload(part)

    def _upload(self, data: bytes) -> None:
        with provider_errors("Connect file write"):
            if self._upload_id is None:
                self._upload_id = self._s3.create_multipart_upload(
                    Bucket=self._bucket, Key=self._key, ContentType=_content_type(self._key)
                )["UploadId"]
            number = len(self._parts) + 1
            answer = self._s3.upload_part(
                Bucket=self._bucket, Key=self._key, UploadId=self._upload_id, PartNumber=number, Body=data
            )
            self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})

    def close(self) -> None:
        """Complete the object: it appears now, whole."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._upload_id is None:
                with provider_errors("Connect file write"):
                    self._s3.put_object(
                        Bucket=self._bucket,
                        Key=self._key,
                        Body=bytes(self._buffer),
                        ContentType=_content_type(self._key),
                    )
                return
            if self._buffer:
                self._upload(bytes(self._buffer))
            with provider_errors("Connect file write"):
                self._s3.complete_multipart_upload(
                    Bucket=self._bucket,
                    Key=self._key,
                    UploadId=self._upload_id,
                    MultipartUpload={"Parts": self._parts},
                )
        except Exception:
            self.abort()
            raise
        finally:
            self._buffer.clear()

    def abort(self) -> None:
        """Give the object up: nothing appears, the parts uploaded so far are discarded."""
        self._closed = True
        self._buffer.clear()
        if self._upload_id is not None:
            upload_id, self._upload_id = self._upload_id, None
            # When this fails too, the bucket's lifecycle rule aborts the upload after a day.
            with contextlib.suppress(ClientError):
                self._s3.abort_multipart_upload(Bucket=self._bucket, Key=self._key, UploadId=upload_id)

    def __enter__(self) -> S3TextSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()
