"""The workflow's work objects (``work/{batchId}/``: chunks, their results, the rejected rows) are
JSON lines, one row a line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def json_line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def json_lines(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.strip():
            data = json.loads(line)
            if isinstance(data, dict):
                yield data
