"""Who is calling, when the context does not say: the service's code, or the harness's."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import phoneid
from phoneid_dev.template import repository_root

if TYPE_CHECKING:
    pass


_PHONEID = Path(phoneid.__file__).resolve().parent
_DEVKIT = Path(__file__).resolve().parents[3]  # devkit/: the local stack and the operator's CLI


@dataclass(frozen=True)
class _CodeRoots:
    """Where the service's code and the harness's are, as the prefixes of their files' paths."""

    root: Path
    service: tuple[str, ...]
    harness: tuple[str, ...]


@cache
def _code_roots() -> _CodeRoots:
    root = repository_root()
    return _CodeRoots(
        root,
        service=(str(root / "functions") + os.sep, str(_PHONEID) + os.sep),
        harness=(
            str(root / "tests") + os.sep,
            str(root / "bench") + os.sep,
            str(_DEVKIT) + os.sep,
        ),
    )


def service_frame(frame: FrameType | None, recorder_file: str) -> str | None:
    """Where the service's own code is calling from, when no harness code runs below it on this
    thread (a task of a pool that lost the function's context); None for the harness's calls and
    for those made by libraries alone (moto's threads)."""
    roots = _code_roots()
    outermost: str | None = None
    while frame is not None:
        path = frame.f_code.co_filename
        if path == recorder_file:  # the recorder's own frames
            frame = frame.f_back
            continue
        if path.startswith(roots.harness):
            return None
        if path.startswith(roots.service):
            outermost = f"{Path(path).relative_to(roots.root)}:{frame.f_lineno}"
        frame = frame.f_back
    return outermost
