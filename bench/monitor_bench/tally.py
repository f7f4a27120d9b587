"""What a pass did, counted where it happens: each identity's check where its monitor state is saved
(with the pass it is saved under), each question to the signal source where the lists are read
(Sandbox: port events and line types, one lookup each per identity checked), and each Lambda
invocation the workflow made, with its start and end."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from phoneid.adapters.dynamodb.enrollments.monitor_states import DynamoMonitorStates
from phoneid.adapters.dynamodb.lists import DynamoSignalLists
from phoneid.domain.monitor import MonitorState
from phoneid.domain.signals import ListKind
from phoneid_dev.stack import LocalStack


@dataclass
class Tally:
    checks: Counter[tuple[str, str]] = field(default_factory=Counter)  # (passId, serviceId) -> saves
    asked: Counter[tuple[str, str]] = field(default_factory=Counter)  # (list kind, phone key) -> lookups
    invocations: list[tuple[str, float, float]] = field(default_factory=list)  # (function, start, end)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def clear(self) -> None:
        with self._lock:
            self.checks.clear()
            self.asked.clear()
            self.invocations.clear()

    def phase(self, function: str) -> tuple[float, float, int]:
        """(first start, last end, invocations) of ``function``'s invocations."""
        runs = [(start, end) for name, start, end in self.invocations if name == function]
        if not runs:
            return 0.0, 0.0, 0
        return min(s for s, _ in runs), max(e for _, e in runs), len(runs)

    @contextmanager
    def counting(self, stack: LocalStack) -> Iterator[Tally]:
        saving, looking_up, invoke = (
            DynamoMonitorStates.save_monitor_state,
            DynamoSignalLists.lookup,
            stack.invoke,
        )
        tally = self

        def saved(store: DynamoMonitorStates, client_id: str, service_id: str, state: MonitorState) -> bool:
            with tally._lock:
                tally.checks[(str(state.pass_id), service_id)] += 1
            return saving(store, client_id, service_id, state)

        def looked_up(lists: DynamoSignalLists, kind: ListKind, keys: Sequence[str]) -> Any:
            with tally._lock:
                for key in keys:
                    tally.asked[(kind.value, key)] += 1
            return looking_up(lists, kind, keys)

        def invoked(function: str, event: dict[str, Any], context: Any) -> Any:
            began = time.perf_counter()
            try:
                return invoke(function, event, context)
            finally:
                with tally._lock:
                    tally.invocations.append((function, began, time.perf_counter()))

        DynamoMonitorStates.save_monitor_state = saved  # type: ignore[method-assign]
        DynamoSignalLists.lookup = looked_up  # type: ignore[method-assign]
        stack.invoke = invoked  # type: ignore[method-assign]
        try:
            yield self
        finally:
            DynamoMonitorStates.save_monitor_state = saving  # type: ignore[method-assign]
            DynamoSignalLists.lookup = looking_up  # type: ignore[method-assign]
            del stack.invoke


def timed(work: Callable[[], Any]) -> tuple[Any, float]:
    began = time.perf_counter()
    result = work()
    return result, time.perf_counter() - began
