"""Connect batches as the operator reads them: a record as data, its one-line summary, a progress bar."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from phoneid.domain.connect import Batch


def batch_data(batch: Batch) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, value in dataclasses.asdict(batch).items():
        if hasattr(value, "isoformat"):
            value = value.isoformat()
        elif hasattr(value, "value"):
            value = value.value
        data[name] = value
    return data


def batch_summary(data: dict[str, Any]) -> str:
    """State, counts and reason: ``delivered  rowsRead=3, valid=1, ...``."""
    counts = ", ".join(f"{name}={count}" for name, count in (data.get("counts") or {}).items())
    reason = f"reason={data['reason']}" if data.get("reason") else ""
    return "  ".join(part for part in (f"{data.get('state', ''):<10}", counts, reason) if part).rstrip()


def batch_line(data: dict[str, Any]) -> str:
    return (
        f"{data.get('created_at', '')}  {data.get('client_name') or '-'}  {data.get('file_name', '')}  "
        f"{batch_summary(data)}"
    )


def client_of_file(file_name: str) -> str:
    from phoneid.domain.connect import parse_file_name

    parsed = parse_file_name(file_name)
    return parsed.client_name if parsed else file_name.split("_", 1)[0]


def progress_bar(done: int, total: int, width: int = 30) -> str:
    filled = width * min(done, total) // max(total, 1)
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} chunks"
