"""Reading the files an operator imports (identities, signal lists), line by line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def jsonl_records(text: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON or None when the line is not JSON) for each non-blank line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError:
                yield number, None
