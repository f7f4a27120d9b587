"""The meter: wraps the local gateway, the stack's handler calls and botocore, and records what
each request of a flow costs."""

from __future__ import annotations

import concurrent.futures
import functools
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import botocore.client

from bench.cost_bench.dynamodb_units import item_size, read_units, whole_item_query, write_units
from bench.cost_bench.prices import TRANSACTION_FACTOR
from bench.cost_bench.records import AwsCall, Invocation, Request
from bench.cost_bench.stored_items import StoredItems
from bench.cost_bench.template_facts import asymmetric_key_ids, function_memory
from tests.harness import Api

# The shop whose page runs the web SDK: the origin of the browser's CORS preflights.
WEB_ORIGIN = "https://shop.example.com"


class Meter:
    """Wraps one Api's gateway, its stack's handler calls and botocore, and records what each request
    of a flow costs. Authorizer answers and CORS preflights are remembered per flow."""

    def __init__(self, api: Api, *, preflights: bool) -> None:
        self._api = api
        self._stack = api.stack
        self._preflights = preflights
        self._items = StoredItems(api.stack)
        self._template = api.stack.template
        self._routes = self._template.routes + self._template.preflights
        self._authorizer_functions = {a.function for a in self._template.authorizers.values()}
        self._memory = function_memory(self._template)
        self._asymmetric_keys = asymmetric_key_ids(api.stack)
        self._requests: list[Request] = []
        self._request: Request | None = None
        self._running: list[Invocation] = []
        self._authorized: set[tuple[str, str]] = set()
        self._preflighted: set[str] = set()
        self._task = threading.local()  # .lane: the pool task this thread runs, if any
        self._lanes = itertools.count(1)

    @contextmanager
    def installed(self) -> Iterator[Meter]:
        gateway = self._api.gateway
        handle, invoke = gateway.handle, self._stack.invoke
        make_api_call = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]
        meter = self

        def api_call(client: Any, operation: str, params: Any) -> Any:
            return meter._api_call(client, operation, params, make_api_call)

        submit = concurrent.futures.ThreadPoolExecutor.submit

        def tracked_submit(pool: Any, task: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
            return submit(pool, meter._in_lane(next(meter._lanes), task), *args, **kwargs)

        concurrent.futures.ThreadPoolExecutor.submit = tracked_submit  # type: ignore[method-assign]
        gateway.handle = lambda *a, **k: self._handle(handle, *a, **k)  # type: ignore[method-assign]
        self._stack.invoke = lambda *a: self._invoke(invoke, *a)  # type: ignore[method-assign]
        # The seam tests/faults.py patches too: one logical call, its retries inside.
        botocore.client.BaseClient._make_api_call = api_call  # type: ignore[attr-defined]
        try:
            yield self
        finally:
            botocore.client.BaseClient._make_api_call = make_api_call  # type: ignore[attr-defined]
            concurrent.futures.ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]
            del gateway.handle, self._stack.invoke

    @contextmanager
    def flow(self) -> Iterator[list[Request]]:
        """Records the requests made inside the block, as one flow."""
        self._requests, self._request = [], None
        self._authorized.clear()
        self._preflighted.clear()
        yield self._requests

    @contextmanager
    def invocations(self, name: str) -> Iterator[Request]:
        """Every invocation made inside the block, recorded as one ``name`` (a workflow's tasks,
        invoked one at a time: no API request of their own)."""
        self._request = Request(name)
        try:
            yield self._request
        finally:
            self._request = None

    def _in_lane(self, lane: int, task: Callable[..., Any]) -> Callable[..., Any]:
        """``task`` marked, while it runs on a pool thread, as lane ``lane``: its calls overlap others'."""

        def run(*args: Any, **kwargs: Any) -> Any:
            self._task.lane = lane
            try:
                return task(*args, **kwargs)
            finally:
                self._task.lane = 0

        return run

    # --- the wrapped layers -------------------------------------------------------------------

    def _handle(
        self, handle: Callable[..., Any], method: str, path: str, headers: Any, body: Any, **kw: Any
    ) -> Any:
        if (
            self._preflights
            and method == "POST"
            and path.startswith("/client/")
            and path not in self._preflighted
        ):
            self._preflighted.add(path)  # the browser asks once per URL, then keeps the answer
            preflight = {
                "origin": WEB_ORIGIN,
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization,content-type",
            }
            answer = self._request_through(handle, "OPTIONS", path, preflight, None)
            assert answer.status == 204, (path, answer.status)
        return self._request_through(handle, method, path, headers, body, **kw)

    def _request_through(
        self, handle: Callable[..., Any], method: str, path: str, headers: Any, body: Any, **kw: Any
    ) -> Any:
        route = next((r for r in self._routes if r.matches(method, path)), None)
        self._request = Request(f"{method} {route.path if route else path}")
        self._requests.append(self._request)
        try:
            return handle(method, path, headers, body, **kw)
        finally:
            self._request = None

    def _invoke(self, invoke: Callable[..., Any], function: str, event: dict[str, Any], context: Any) -> Any:
        invocation = Invocation(function, self._memory[function])
        if function in self._authorizer_functions:
            token = (function, str(event.get("authorizationToken")))
            invocation.cached = token in self._authorized
            self._authorized.add(token)
        if self._request is not None:
            self._request.invocations.append(invocation)
        self._running.append(invocation)
        # The process's CPU: the handler's threads are the only ones busy while it runs.
        began = time.process_time()
        try:
            return invoke(function, event, context)
        finally:
            elapsed = (time.process_time() - began) * 1000
            self._running.pop()
            invocation.cpu_ms = elapsed - invocation.excluded_ms
            if self._running:
                self._running[-1].excluded_ms += elapsed

    def _api_call(self, client: Any, operation: str, params: Any, make_api_call: Callable[..., Any]) -> Any:
        if not self._running:
            return make_api_call(client, operation, params)  # setup and inspection: not a flow's cost
        began = time.thread_time()  # this thread's: calls on other threads run meanwhile
        service = client.meta.service_model.endpoint_prefix
        call = AwsCall(f"{service}.{operation}", getattr(self._task, "lane", 0))
        written = self._written(operation, params) if service == "dynamodb" else []
        before = [self._items.get(table, key) for table, key, _ in written]
        response: Any = None
        try:
            response = make_api_call(client, operation, params)
            return response
        finally:
            if service == "dynamodb":
                reread = functools.partial(make_api_call, client, operation)  # not recorded
                call.read_units = self._read_units(operation, params, response, reread)
                after = [self._items.get(table, key) for table, key, _ in written]
                call.write_units = self._write_units(written, before, after)
            elif service == "kms":
                call.kms_asymmetric = str(params.get("KeyId")) in self._asymmetric_keys
            elif service == "sns" and operation == "Publish" and params.get("PhoneNumber"):
                call.sms = 1
            self._running[-1].calls.append(call)
            self._running[-1].excluded_ms += (time.thread_time() - began) * 1000

    # --- DynamoDB's request units ---------------------------------------------------------------------

    def _written(self, operation: str, params: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], int]]:
        """(table, key, price factor) of each item a write operation names."""
        if operation == "PutItem":
            return [(params["TableName"], self._items.key_of(params["TableName"], params["Item"]), 1)]
        if operation in ("UpdateItem", "DeleteItem"):
            return [(params["TableName"], dict(params["Key"]), 1)]
        if operation == "TransactWriteItems":
            named = []
            for entry in params["TransactItems"]:
                ((kind, action),) = entry.items()
                key = (
                    self._items.key_of(action["TableName"], action["Item"])
                    if kind == "Put"
                    else action["Key"]
                )
                named.append((action["TableName"], dict(key), TRANSACTION_FACTOR))
            return named
        if operation == "BatchWriteItem":
            return [
                (
                    table,
                    self._items.key_of(table, r["PutRequest"]["Item"])
                    if "PutRequest" in r
                    else r["DeleteRequest"]["Key"],
                    1,
                )
                for table, requests in params["RequestItems"].items()
                for r in requests
            ]
        return []

    def _write_units(
        self, written: list[tuple[str, dict[str, Any], int]], before: list[Any], after: list[Any]
    ) -> float:
        units = 0.0
        for (table, _, factor), old, new in zip(written, before, after, strict=True):
            # A write is billed on the larger of the item before and after (a condition check on the item).
            units += factor * write_units(max(item_size(old), item_size(new)))
            units += self._items.index_write_units(table, old, new)
        return units

    def _read_units(
        self,
        operation: str,
        params: Mapping[str, Any],
        response: Any,
        reread: Callable[[dict[str, Any]], Any],
    ) -> float:
        if operation == "GetItem":
            stored = self._items.get(params["TableName"], params["Key"])  # billed whole, projection or not
            return read_units(item_size(stored), consistent=bool(params.get("ConsistentRead")))
        if operation == "BatchGetItem":
            units = 0.0
            for table, spec in params["RequestItems"].items():
                for key in spec["Keys"]:
                    size = item_size(self._items.get(table, key))
                    units += read_units(size, consistent=bool(spec.get("ConsistentRead")))
            return units
        if operation == "TransactGetItems":
            return sum(
                TRANSACTION_FACTOR
                * read_units(
                    item_size(self._items.get(g["Get"]["TableName"], g["Get"]["Key"])), consistent=True
                )
                for g in params["TransactItems"]
            )
        if operation in ("Query", "Scan") and response is not None:
            # Billed on every item read, whole and before any filter, summed then rounded: a count
            # or a projection is asked again as a plain read of the same page, to size what it read.
            plain = whole_item_query(params)
            items = (reread(plain) if plain != params else response).get("Items", [])
            return read_units(sum(map(item_size, items)), consistent=bool(params.get("ConsistentRead")))
        return 0.0
