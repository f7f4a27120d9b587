"""Handlers for tests/integration/test_function_processes.py, run in worker processes."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from phoneid import bootstrap


class ChunkThrottled(Exception):
    """Named like the Connect task's retryable error: Step Functions matches on the class name."""


def echo(event: Any, context: Any) -> dict[str, Any]:
    return {
        "event": event,
        "pid": os.getpid(),
        "function": context.function_name,
        "remainingMs": context.get_remaining_time_in_millis(),
        "now": bootstrap.container().clock.now().isoformat(),
    }


def throttled(event: Any, context: Any) -> None:
    raise ChunkThrottled(f"chunk {event['chunk']}: the upstream source is throttling")


def exits(event: Any, context: Any) -> None:
    os._exit(3)


def hangs(event: Any, context: Any) -> None:
    threading.Event().wait()


def says_then_hangs(event: Any, context: Any) -> None:
    """Hangs, having written that it runs to the file the event names."""
    Path(event["running"]).write_text("running")
    threading.Event().wait()


def not_json(event: Any, context: Any) -> Any:
    return {"values": {1, 2}}
