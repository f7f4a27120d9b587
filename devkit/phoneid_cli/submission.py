"""``phoneid connect submit``'s work: a batch file put into its client's upload directory, its batch
followed to the end, its results fetched beside it. Time is injected (``now``, ``monotonic``,
``sleep``): the batch runs in another process, so the service polls."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneid_cli.batches import batch_data, batch_summary, progress_bar

if TYPE_CHECKING:
    from phoneid.domain.connect import Batch
    from phoneid.ports import BatchStates

Progress = Callable[[str, bool], None]  # (line, final)


@dataclass(frozen=True)
class Uploaded:
    key: str
    batch_id: str
    since: datetime  # batches of this key created before are not this upload's


def _wall_clock() -> datetime:
    return datetime.now(UTC)


@dataclass
class Submission:
    s3: Any
    bucket: str
    states: BatchStates
    progress: Progress
    now: Callable[[], datetime] = _wall_clock
    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    poll_seconds: float = 0.5

    def upload(self, path: Path, client_name: str) -> Uploaded:
        from phoneid.domain.connect import batch_id_of, upload_key

        key = upload_key(client_name, path.name)
        since = self.now() - timedelta(seconds=5)
        size = path.stat().st_size
        sent = [0]

        def uploaded(chunk: int) -> None:
            sent[0] += chunk
            self.progress(f"{path.name}: uploading {sent[0] * 100 // max(size, 1)}% of {size:,} bytes", False)

        self.s3.upload_file(str(path), self.bucket, key, Callback=uploaded)
        head = self.s3.head_object(Bucket=self.bucket, Key=key)
        self.progress(f"{path.name}: uploaded to s3://{self.bucket}/{key}", True)
        version = head.get("VersionId") or str(head.get("ETag", "")).strip('"')
        return Uploaded(key, batch_id_of(key, version), since)

    def follow(self, path: Path, client_name: str, upload: Uploaded, timeout: float) -> Batch | None:
        """The batch once final, each change of its state shown; None when ``timeout`` passed first."""
        deadline = self.monotonic() + timeout
        shown = ""
        while self.monotonic() < deadline:
            batch = self._find(upload, client_name)
            if batch is not None:
                line = f"{path.name}: {batch_summary(batch_data(batch))}"
                if batch.state.value == "verifying" and batch.chunks:
                    line += " " + progress_bar(self._chunks_done(batch.batch_id), batch.chunks)
                if line != shown:
                    self.progress(line, batch.state.final)
                    shown = line
                if batch.state.final:
                    return batch
            elif not shown:
                shown = f"{path.name}: waiting for the workflow to pick the file up"
                self.progress(shown, False)
            self.sleep(self.poll_seconds)
        self.progress(f"{path.name}: still not finished after {timeout:g} s", True)
        return None

    def download_results(self, path: Path, client_name: str) -> list[Path]:
        """The output, errors and rejected files this batch produced, written beside ``path``."""
        from botocore.exceptions import ClientError

        from phoneid.adapters.aws import error_code
        from phoneid.domain.connect import (
            download_key,
            errors_file_name,
            output_file_name,
            rejected_file_name,
        )

        written = []
        for name in (output_file_name(path.name), errors_file_name(path.name), rejected_file_name(path.name)):
            target = path.with_name(name)
            try:
                self.s3.download_file(self.bucket, download_key(client_name, name), str(target))
            except ClientError as error:
                if error_code(error) not in ("404", "NoSuchKey", "NotFound"):
                    raise
                continue  # a file this batch did not produce
            written.append(target)
        return written

    def _find(self, upload: Uploaded, client_name: str) -> Batch | None:
        batch = self.states.get(upload.batch_id)
        if batch is not None:
            return batch
        # The object's version as the workflow saw it may differ (no versionId in the event): by key.
        recent = [
            b
            for b in self.states.list_recent(client_name, limit=20)
            if b.key == upload.key and b.created_at >= upload.since
        ]
        return recent[0] if recent else None

    def _chunks_done(self, batch_id: str) -> int:
        """Chunks whose results are written (each chunk task writes one object when it is done)."""
        from phoneid.domain.connect import work_prefix

        done = 0
        pages = self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=f"{work_prefix(batch_id)}results/"
        )
        for page in pages:
            done += int(page.get("KeyCount", 0))
        return done
