"""The records of one process: each distinct call once, a whole JSON line at a time."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phoneid_dev.access.actions.registry import requests_of
from phoneid_dev.access.actions.requests import Call, Stack, Unmapped
from phoneid_dev.access.recording.facts import StackFacts

if TYPE_CHECKING:
    pass


class Recorder:
    """Writes this process's records: each distinct one once, a whole line at a time."""

    def __init__(self, directory: Path, origin: int) -> None:
        self.directory = directory
        self.origin = origin
        self._seen: set[str] = set()
        self._stacks: set[str] = set()
        self._lock = threading.Lock()
        self._file: int | None = None
        self.current_test: str | None = None

    def _write(self, record: Mapping[str, Any]) -> None:
        line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            if self._file is None:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._file = os.open(
                    self.directory / f"{os.getpid()}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644
                )
            os.write(self._file, line)

    def _once(self, record: dict[str, Any]) -> None:
        """Written unless written before; the test and the time are the first occurrence's."""
        key = json.dumps(record, sort_keys=True, default=str)
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
        record |= self._when()
        self._write(record)

    def _when(self) -> dict[str, Any]:
        """The test that caused a call: known here in a test process; in a subprocess, found later
        from the time and the test process's record of when each test started."""
        if self.origin == os.getpid():
            running = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]  # "path::name (call)"
            return {"test": running or self.current_test}
        return {"origin": self.origin, "time": time.time()}

    def stack(self, facts: StackFacts) -> str:
        key = facts.key
        if key not in self._stacks:
            self._stacks.add(key)
            self._write({"kind": "stack", "key": key, **facts.to_json()})
        return key

    def test_started(self, node_id: str) -> None:
        self.current_test = node_id
        self._write({"kind": "test", "test": node_id, "pid": os.getpid(), "time": time.time()})

    def call(self, call: Call, function: str, facts: StackFacts | None) -> None:
        record: dict[str, Any] = {
            "kind": "call",
            "function": function,
            "service": call.service,
            "operation": call.operation,
        }
        if facts is None:
            self._once(record | {"error": "the stack of this call is unknown"})
            return
        record["stack"] = self.stack(facts)
        try:
            requests = requests_of(call, Stack(facts.endpoints, facts.bucket_keys))
        except Unmapped as error:
            self._once(record | {"error": str(error)})
            return
        self._once(record | {"requests": [request.to_json() for request in requests]})

    def unattributed(self, service: str, operation: str, where: str) -> None:
        self._once({"kind": "unattributed", "service": service, "operation": operation, "where": where})

    def failed(self, service: str, operation: str, error: BaseException) -> None:
        self._once({"kind": "broken", "service": service, "operation": operation, "error": repr(error)})


_recorder: Recorder | None = None
