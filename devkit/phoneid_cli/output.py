"""What commands print, and the files they read."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from phoneid_cli.errors import CommandError


def show(data: Any, as_json: bool, lines: Sequence[str]) -> None:
    """``data`` as JSON (``--json``), else ``lines`` for a reader."""
    print(json.dumps(data, indent=2) if as_json else "\n".join(lines))


def warn(text: str) -> None:
    print(text, file=sys.stderr)


def read_text(path: Path) -> str:
    """A file named on the command line; a missing one is an OSError with its name (errors.py)."""
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError as error:
        raise CommandError(f"{path}: not UTF-8 text (byte {error.start}): save it as UTF-8") from None
