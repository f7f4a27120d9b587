"""What the console remembers of the API's traffic: the recent requests (a bounded ring), the flows
they belong to with each step's outcome, and the day's passes and failures by reason code.

Fed by ``phoneid_dev.gateway_route`` once per answered request, with the request's headers and body
and the answer; only what ``reading`` takes from them is kept
(docs/adr/0105-a-console-fed-by-what-the-stack-already-sees.md).
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from phoneid_dev.console_page import reading
from phoneid_dev.template import Route

MAX_REQUESTS = 500
MAX_FLOWS = 200

# The calls that start a flow (their answer names it), and those whose answer decides it.
_STARTS = {"/v3/start": "staged", "/v3/unify": "unify", "/v3/verify": "verify"}
_DECIDING = frozenset({"/v3/complete", "/v3/unify-status", "/v3/verify"})


@dataclass
class Flow:
    correlation_id: str
    api: str
    client_id: str | None
    started_at: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    outcome: str | None = None  # "pass" | "fail", once decided
    evaluation: dict[str, dict[str, Any]] = field(default_factory=dict)

    def shown(self) -> dict[str, Any]:
        reasons = sorted({code for kept in self.evaluation.values() for code in kept["reasons"]})
        return {
            "correlationId": self.correlation_id,
            "api": self.api,
            "clientId": self.client_id,
            "startedAt": self.started_at,
            "steps": list(self.steps),
            "outcome": self.outcome,
            "evaluation": self.evaluation,
            "reasons": reasons,
        }


@dataclass
class DayCounts:
    passed: int = 0
    failed: int = 0
    by_reason: Counter[int] = field(default_factory=Counter)


class ConsoleFeed:
    """``routes``: the API's routes (the template's), to name a request by its route, never its raw
    path (``/l/{token}`` carries a secret). ``known_client``: whether a client id is one of the
    stack's. ``now``: the stack's clock."""

    def __init__(
        self,
        routes: Sequence[Route],
        known_client: Callable[[str], bool],
        now: Callable[[], datetime],
        max_requests: int = MAX_REQUESTS,
        max_flows: int = MAX_FLOWS,
    ) -> None:
        self._routes = routes
        self._known_client = known_client
        self._clients: set[str] = set()  # known ones, asked once
        self._now = now
        self._requests: deque[dict[str, Any]] = deque(maxlen=max_requests)
        self._flows: OrderedDict[str, Flow] = OrderedDict()
        self._max_flows = max_flows
        self._days: dict[str, DayCounts] = {}
        self._sequence = 0
        self._lock = threading.Lock()

    def observe(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: str | None,
        status: int,
        answer_text: str,
        elapsed_ms: float,
    ) -> None:
        """One answered request: its row, and its step when it belongs to a flow."""
        route = next((r.path for r in self._routes if r.matches(method, path)), None)
        answer = reading.json_object(answer_text)
        client = reading.claimed_client(headers, body)
        at = self._now().isoformat(timespec="seconds")
        with self._lock:
            client = client if client is not None and self._is_client(client) else None
            self._sequence += 1
            self._requests.append(
                {
                    "seq": self._sequence,
                    "at": at,
                    "method": reading.http_method(method),
                    "route": route or "(no route)",
                    "clientId": client,
                    "status": status,
                    "code": reading.error_code(status, answer),
                    "ms": round(elapsed_ms),
                }
            )
            if route is not None:
                self._step(route, headers, body, status, answer, client, at)

    def _is_client(self, client_id: str) -> bool:
        if client_id not in self._clients and self._known_client(client_id):
            self._clients.add(client_id)
        return client_id in self._clients

    def _step(
        self,
        route: str,
        headers: Mapping[str, str],
        body: str | None,
        status: int,
        answer: dict[str, Any],
        client: str | None,
        at: str,
    ) -> None:
        flow = self._flow_of(route, headers, body, status, answer, client, at)
        if flow is None:
            return
        success = reading.success(answer) if status == 200 else None
        evaluation = reading.evaluation(answer)
        flow.steps.append(
            {
                "step": _step_name(route),
                "status": status,
                "code": reading.error_code(status, answer),
                "success": success,
                "at": at,
            }
        )
        if evaluation:
            flow.evaluation = evaluation
        if flow.outcome is None and (success is False or (success is True and route in _DECIDING)):
            flow.outcome = "pass" if success else "fail"
            day = self._days.setdefault(at[:10], DayCounts())
            if success:
                day.passed += 1
            else:
                day.failed += 1
                day.by_reason.update({code for kept in flow.evaluation.values() for code in kept["reasons"]})

    def _flow_of(
        self,
        route: str,
        headers: Mapping[str, str],
        body: str | None,
        status: int,
        answer: dict[str, Any],
        client: str | None,
        at: str,
    ) -> Flow | None:
        """The flow a request belongs to: a new one named by a starting call's answer, or a known one
        its body or flow token names (an unknown name is never kept: the caller wrote it)."""
        if route in _STARTS and status == 200:
            correlation_id = reading.identifier(answer.get("correlationId"))
            if correlation_id is None:
                return None
            flow = Flow(correlation_id, _STARTS[route], client, at)
            self._flows[correlation_id] = flow
            while len(self._flows) > self._max_flows:
                self._flows.popitem(last=False)
            return flow
        named = reading.identifier(reading.json_object(body).get("correlationId"))
        if route.startswith("/client/"):
            named = reading.flow_token_flow(headers)
        return self._flows.get(named) if named is not None else None

    def requests(self, after: int = 0) -> list[dict[str, Any]]:
        """The kept requests newer than sequence number ``after``, oldest first."""
        with self._lock:
            return [dict(row) for row in self._requests if row["seq"] > after]

    def flows(self) -> list[dict[str, Any]]:
        """The kept flows, newest first."""
        with self._lock:
            return [flow.shown() for flow in reversed(self._flows.values())]

    def today(self) -> dict[str, Any]:
        """The stack's day so far: flows passed and failed, and the failures' reason codes."""
        date = self._now().date().isoformat()
        with self._lock:
            day = self._days.get(date, DayCounts())
            return {
                "date": date,
                "passed": day.passed,
                "failed": day.failed,
                "byReason": {str(code): n for code, n in sorted(day.by_reason.items())},
            }


def _step_name(route: str) -> str:
    """``/v3/validate`` is ``validate``; a client SDK's ``/client/v1/otp`` is ``client otp``."""
    return route.removeprefix("/v3/") if route.startswith("/v3/") else f"client {route.rsplit('/', 1)[-1]}"
