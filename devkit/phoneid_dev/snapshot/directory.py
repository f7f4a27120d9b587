"""The data directory of ``phoneid dev --data DIR``: one file, ``DIR/stack.json``, holding a
snapshot of the stack (``phoneid_dev.snapshot.state``) with the format's version and the stack it
belongs to. It holds secrets (KMS key material, the banner client's secret): a directory made here
is 0700 (one that exists keeps its mode) and the file 0600, written whole (a temporary file renamed
over it), so that a reader, or a start after a crash, finds the last snapshot or the one before,
never half of one.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# The snapshot's layout; a start refuses a file of another (never loads half of it).
FORMAT_VERSION = 1
FILE_NAME = "stack.json"


class DataRefused(Exception):
    """The directory holds what this stack cannot load: said why, and what to do, before anything runs."""


@dataclass(frozen=True)
class StackKind:
    """What a snapshot belongs to: only a stack of the same tier, region and AWS region loads it."""

    tier: str
    region: str
    aws_region: str

    def describe(self) -> str:
        return f"a {self.tier} {self.region} stack (AWS region {self.aws_region})"


class DataDirectory:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._written: str | None = None  # what the last save wrote: an unchanged stack is not written again

    @property
    def file(self) -> Path:
        return self.path / FILE_NAME

    def load(self, kind: StackKind) -> dict[str, Any] | None:
        """The snapshot kept here for a stack of ``kind``; None when there is none yet."""
        if self.path.exists() and not self.path.is_dir():
            raise DataRefused(f"--data {self.path}: not a directory")
        if not self.file.exists():
            return None
        try:
            snapshot: dict[str, Any] = json.loads(self.file.read_text())
        except (OSError, ValueError) as error:
            raise DataRefused(
                f"--data {self.path}: {FILE_NAME} cannot be read ({error}); move it away to start afresh"
            ) from None
        version = snapshot.get("formatVersion") if isinstance(snapshot, dict) else None
        if version != FORMAT_VERSION:
            raise DataRefused(
                f"--data {self.path}: {FILE_NAME} has format version {version!r}, this phoneid dev reads "
                f"version {FORMAT_VERSION}: start the version that wrote it, or use another directory"
            )
        try:
            kept = StackKind(**snapshot["stack"])
        except (KeyError, TypeError):  # edited by hand, or cut short: not a snapshot this stack wrote
            raise DataRefused(
                f"--data {self.path}: {FILE_NAME} does not say which stack it belongs to; move it away "
                "to start afresh"
            ) from None
        if kept != kind:
            raise DataRefused(
                f"--data {self.path} holds {kept.describe()}, not {kind.describe()}: start with "
                f"--tier {kept.tier} --region {kept.region}, or use another directory"
            )
        return snapshot

    def save(self, kind: StackKind, state: dict[str, Any]) -> bool:
        """``state`` as this directory's snapshot, whole at once; the directory and file private.
        False when it is what the last save wrote (nothing written)."""
        content = json.dumps(
            {"formatVersion": FORMAT_VERSION, "stack": asdict(kind), **state}, separators=(",", ":")
        )
        if content == self._written and self.file.exists():
            return False
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        written = self.path / f".{FILE_NAME}.{os.getpid()}"
        descriptor = os.open(written, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(descriptor, "w") as sink:
                sink.write(content)
                sink.flush()
                os.fsync(sink.fileno())
            os.chmod(written, 0o600)  # a file left by a crash may have been made before
            written.replace(self.file)
        except BaseException:
            written.unlink(missing_ok=True)
            raise
        self._written = content
        return True
