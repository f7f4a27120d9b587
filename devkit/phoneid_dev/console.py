"""The local stack's log: one line per event on stderr, flushed at once (stdout is the CLI's)."""

from __future__ import annotations

import sys


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
