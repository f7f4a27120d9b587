"""Dollars per 1,000 verifications: each flow run on moto in this process, priced at AWS list prices.

Every flow goes through the local API Gateway (authorizers and Lambda proxy events included), the
way bench/staged_flow.py runs it. The script measures, it does not list: each request's endpoint,
the functions that served it, every botocore call they made (with its parameters, and the stored
items before and after, for DynamoDB's request units) and each handler's own CPU time. It then
prices that at the us-east-1 on-demand prices below. SMS is counted and priced apart.

What is modelled, not measured (each printed with the figures):

- API Gateway caches an authorizer's answer per token for the TTL in template.yaml
  (``ReauthorizeEvery``), longer than a flow: each token a flow uses is authorized once per flow.
  The integrator's access token is shared by its flows, so this overstates a busy integrator.
- The integrator fetches one access token per ``--flows-per-token`` flows (tokens live 60 minutes).
- The customer's device runs the client API as the web SDK does (clients/web/phoneid.js), with one
  CORS preflight per client API path per flow (browsers keep it 10 minutes); ``--native`` drops them.
- Billed Lambda duration: the handler's CPU time here, AWS calls and moto excluded, stretched by the
  share of a vCPU the function's memory buys, plus a fixed latency per AWS call; rounded up to 1 ms.
  Warm functions only: what a container does once (imports, clients, public keys) is not counted.
- DynamoDB request units from item sizes by DynamoDB's size rules (moto reports no consumed
  capacity): a read is billed on the whole stored item, a write on the larger of the item before
  and after, a transaction twice, an index entry that changes once more.

    .venv/bin/python bench/cost.py [--rounds 3] [--flows-per-token 100] [--native] [--markdown]
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import functools
import itertools
import json
import math
import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Any

import _setup  # noqa: F401 - first: the import path and the fake AWS environment (bench/_setup.py)

# isort: split

import botocore.client
import jwt
from moto import mock_aws

from phoneid import bootstrap
from phoneid.domain.clients import DEFAULT_FLAGS, Flag
from phoneid_dev.patches import apply_all
from phoneid_dev.stack import LocalStack
from phoneid_dev.template import Template
from tests.device import KeyPair, latest_code
from tests.harness import PUBLIC_BASE_URL, Api, Integrator
from tests.unit.helpers import identity_record

# --- prices: us-east-1, on-demand list prices in USD, free tiers left out ---------------------------

# Amazon API Gateway pricing, REST APIs: $3.50 per million requests (the first 333 million a month).
API_GATEWAY_PER_REQUEST = 3.50 / 1_000_000
# AWS Lambda pricing, Arm (Graviton) price: $0.20 per million requests, $0.0000133334 per GB-second
# (the first 7.5 billion GB-seconds a month).
LAMBDA_PER_REQUEST = 0.20 / 1_000_000
LAMBDA_PER_GB_SECOND = 0.0000133334
# Amazon DynamoDB pricing, on-demand capacity, Standard table class: $0.625 per million write
# request units, $0.125 per million read request units.
DYNAMODB_PER_WRITE_UNIT = 0.625 / 1_000_000
DYNAMODB_PER_READ_UNIT = 0.125 / 1_000_000
# AWS KMS pricing: $0.03 per 10,000 requests (symmetric, HMAC and RSA 2048 keys); $0.15 per 10,000
# asymmetric requests on any other key (the stack has none: its tokens are signed in the functions
# under keys derived from an HMAC key).
KMS_PER_REQUEST = 0.03 / 10_000
KMS_PER_ASYMMETRIC_REQUEST = 0.15 / 10_000
# Amazon SNS SMS pricing, United States: about $0.00581 per message sent, carrier fees included;
# an assumption (it varies with the origination number's type and the carrier), priced apart.
SMS_US_PER_MESSAGE = 0.00581

# --- DynamoDB's units -------------------------------------------------------------------------------

WRITE_UNIT_BYTES = 1024  # one write request unit: an item of up to 1 KB
READ_UNIT_BYTES = 4096  # one read request unit: a strongly consistent read of up to 4 KB
TRANSACTION_FACTOR = 2  # a transactional read or write costs twice a plain one

# --- the duration model (assumptions, not measurements) ---------------------------------------------

# What one AWS call keeps a warm function waiting, same Region, connection reused (milliseconds).
CALL_LATENCY_MS = {"dynamodb": 6.0, "kms": 10.0, "sns": 30.0}
OTHER_CALL_LATENCY_MS = 20.0
# Lambda gives a function one full vCPU at 1,769 MB and a proportional share of one below that.
FULL_VCPU_MEMORY_MB = 1769

# --- the flows' people -------------------------------------------------------------------------------

STAGED_CUSTOMER = "+12025550142"  # in the identity table: challenge and complete find her
UNIFY_CUSTOMER = "+12025550144"  # possession only
VERIFY_CUSTOMER = "+12025550146"  # in the identity table, enrolled by the first (warm-up) round
WEB_ORIGIN = "https://shop.example.com"


# ====================================================================================================
# Pricing arithmetic (pure: tests/unit/test_cost_model.py checks it)
# ====================================================================================================


def number_size(text: str) -> int:
    """A DynamoDB number's size: one byte per two significant digits (leading and trailing zeros
    trimmed), plus one."""
    digits = Decimal(text).normalize().as_tuple().digits
    return math.ceil(len(digits) / 2) + 1


def binary_size(value: Any) -> int:
    """Bytes of a binary value: raw from botocore, base64 text as moto stores it."""
    if isinstance(value, str):
        return len(base64.b64decode(value))
    return len(getattr(value, "value", value))


def attribute_value_size(value: Mapping[str, Any]) -> int:
    """The size DynamoDB bills for one attribute value in its wire form ({"S": "..."} and so on)."""
    ((kind, data),) = value.items()
    if kind == "S":
        return len(data.encode())
    if kind == "N":
        return number_size(data)
    if kind == "B":
        return binary_size(data)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(each.encode()) for each in data)
    if kind == "NS":
        return sum(number_size(each) for each in data)
    if kind == "BS":
        return sum(binary_size(each) for each in data)
    if kind == "L":  # 3 bytes for the list, 1 per element
        return 3 + sum(1 + attribute_value_size(each) for each in data)
    if kind == "M":  # 3 bytes for the map, 1 per element, plus each element's name
        return 3 + sum(1 + len(name.encode()) + attribute_value_size(each) for name, each in data.items())
    raise ValueError(f"unknown DynamoDB type {kind}")


def item_size(item: Mapping[str, Any] | None) -> int:
    """An item's size: each attribute's name in UTF-8 plus its value."""
    return sum(len(name.encode()) + attribute_value_size(value) for name, value in (item or {}).items())


def read_units(size: int, *, consistent: bool) -> float:
    """Read request units of one read of ``size`` bytes: per started 4 KB, half when eventually
    consistent; an absent item still costs the minimum."""
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    return units if consistent else units / 2


def write_units(size: int) -> int:
    """Write request units of writing ``size`` bytes: per started 1 KB, at least one."""
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def index_entry(
    index: Mapping[str, Any], table_keys: list[str], item: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """What a global secondary index holds of ``item``: None when the item lacks the index's key."""
    index_keys = [key["AttributeName"] for key in index["KeySchema"]]
    if item is None or not all(name in item for name in index_keys):
        return None  # a sparse index: the item is not in it
    projection = index.get("Projection", {})
    if projection.get("ProjectionType", "ALL") == "ALL":
        return dict(item)
    kept = {*table_keys, *index_keys, *projection.get("NonKeyAttributes", [])}
    return {name: value for name, value in item.items() if name in kept}


def index_write_units(
    indexes: list[Mapping[str, Any]],
    table_keys: list[str],
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
) -> int:
    """Write units of the index entries one item's write changes: an entry rewritten in place costs
    one write, one that moves (its index key changed) a delete and a put; an unchanged one nothing."""
    units = 0
    for index in indexes:
        old, new = (index_entry(index, table_keys, item) for item in (before, after))
        if old == new:
            continue
        index_keys = [key["AttributeName"] for key in index["KeySchema"]]
        if old is not None and new is not None and all(old[k] == new[k] for k in index_keys):
            units += write_units(item_size(new))
        else:
            units += sum(write_units(item_size(entry)) for entry in (old, new) if entry is not None)
    return units


def cpu_share(memory_mb: int) -> float:
    """The fraction of a vCPU a function of ``memory_mb`` gets (one vCPU at 1,769 MB)."""
    return min(1.0, memory_mb / FULL_VCPU_MEMORY_MB)


def call_latency_ms(service: str) -> float:
    return CALL_LATENCY_MS.get(service, OTHER_CALL_LATENCY_MS)


def waiting_ms(calls: list[tuple[int, str]]) -> float:
    """How long a handler waits on its AWS calls, given as (lane, service), lane 0 the handler's own
    thread: its calls one after the other; the tasks it hands to a thread pool (the signal sources,
    asked all at once) overlap, so the wait for them is the longest task's."""
    own = sum(call_latency_ms(service) for lane, service in calls if lane == 0)
    tasks: dict[int, float] = defaultdict(float)
    for lane, service in calls:
        if lane:
            tasks[lane] += call_latency_ms(service)
    return own + max(tasks.values(), default=0.0)


def billed_duration_ms(cpu_ms: float, memory_mb: int, waited_ms: float) -> int:
    """Lambda's billed duration: the handler's CPU on its share of a vCPU plus its waits on AWS,
    rounded up to the millisecond."""
    return max(1, math.ceil(cpu_ms / cpu_share(memory_mb) + waited_ms))


def gb_seconds(duration_ms: int, memory_mb: int) -> float:
    return duration_ms / 1000 * memory_mb / 1024


@dataclass
class Usage:
    """What some requests consume, in the units AWS bills."""

    api_requests: float = 0.0
    lambda_requests: float = 0.0
    lambda_gb_seconds: float = 0.0
    read_units: float = 0.0
    write_units: float = 0.0
    kms_requests: float = 0.0
    kms_asymmetric_requests: float = 0.0
    sms: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def scaled(self, factor: float) -> Usage:
        return Usage(*(getattr(self, f.name) * factor for f in fields(self)))

    def dollars(self) -> Cost:
        return Cost(
            api_gateway=self.api_requests * API_GATEWAY_PER_REQUEST,
            lambda_requests=self.lambda_requests * LAMBDA_PER_REQUEST,
            lambda_gb_seconds=self.lambda_gb_seconds * LAMBDA_PER_GB_SECOND,
            dynamodb_reads=self.read_units * DYNAMODB_PER_READ_UNIT,
            dynamodb_writes=self.write_units * DYNAMODB_PER_WRITE_UNIT,
            kms=self.kms_requests * KMS_PER_REQUEST
            + self.kms_asymmetric_requests * KMS_PER_ASYMMETRIC_REQUEST,
            sms=self.sms * SMS_US_PER_MESSAGE,
        )


@dataclass(frozen=True)
class Cost:
    """Dollars, split as AWS bills them; ``total`` leaves SMS out."""

    api_gateway: float
    lambda_requests: float
    lambda_gb_seconds: float
    dynamodb_reads: float
    dynamodb_writes: float
    kms: float
    sms: float

    @property
    def total(self) -> float:
        return (
            self.api_gateway
            + self.lambda_requests
            + self.lambda_gb_seconds
            + self.dynamodb_reads
            + self.dynamodb_writes
            + self.kms
        )


# ====================================================================================================
# Measuring: requests, invocations, AWS calls
# ====================================================================================================


@dataclass
class AwsCall:
    name: str  # "dynamodb.GetItem"
    lane: int = 0  # 0: the handler's thread; else the thread pool task that made the call
    read_units: float = 0.0
    write_units: float = 0.0
    kms_asymmetric: bool = False
    sms: int = 0

    @property
    def service(self) -> str:
        return self.name.split(".", 1)[0]


@dataclass
class Invocation:
    function: str
    memory_mb: int
    calls: list[AwsCall] = field(default_factory=list)
    # The handler's own CPU here, all its threads: its AWS calls (moto's work) and nested invocations out.
    cpu_ms: float = 0.0
    excluded_ms: float = 0.0
    cached: bool = False  # an authorizer answer API Gateway has in its cache: not invoked in AWS

    @property
    def billed_ms(self) -> int:
        waited = waiting_ms([(call.lane, call.service) for call in self.calls])
        return billed_duration_ms(self.cpu_ms, self.memory_mb, waited)

    def usage(self) -> Usage:
        if self.cached:
            return Usage()
        usage = Usage(lambda_requests=1, lambda_gb_seconds=gb_seconds(self.billed_ms, self.memory_mb))
        for call in self.calls:
            usage.read_units += call.read_units
            usage.write_units += call.write_units
            if call.service == "kms":
                if call.kms_asymmetric:
                    usage.kms_asymmetric_requests += 1
                else:
                    usage.kms_requests += 1
            usage.sms += call.sms
        return usage


@dataclass
class Request:
    endpoint: str  # "POST /v3/start", the route as the template names it
    invocations: list[Invocation] = field(default_factory=list)

    def usage(self) -> Usage:
        usage = Usage(api_requests=1)
        for invocation in self.invocations:
            usage += invocation.usage()
        return usage

    def billed(self) -> list[Invocation]:
        return [invocation for invocation in self.invocations if not invocation.cached]


class StoredItems:
    """Items as moto holds them: what a read is billed on, and a write's item before and after."""

    def __init__(self, stack: LocalStack) -> None:
        from moto.dynamodb.models import dynamodb_backends

        self._backend = dynamodb_backends[stack.account_id][stack.aws_region]
        tables = stack.template.of_type("AWS::DynamoDB::Table")
        self._indexes = {
            stack.physical_ids[name]: props.get("GlobalSecondaryIndexes") or []
            for name, props in tables.items()
        }
        self._keys = {
            stack.physical_ids[name]: [key["AttributeName"] for key in props["KeySchema"]]
            for name, props in tables.items()
        }

    def key_of(self, table: str, item: Mapping[str, Any]) -> dict[str, Any]:
        return {name: item[name] for name in self._keys[table] if name in item}

    def get(self, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        wire = {name: _as_wire(value) for name, value in key.items()}
        try:
            found = self._backend.get_item(table, wire)
        except Exception:  # a malformed key: DynamoDB refuses the call, moto too
            return None
        return found.to_json()["Attributes"] if found is not None else None

    def index_write_units(
        self, table: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
    ) -> int:
        return index_write_units(self._indexes.get(table, []), self._keys[table], before, after)


def _as_wire(value: Any) -> Any:
    """A botocore attribute value as moto's backend takes it: binary as base64 text."""
    if isinstance(value, dict):
        return {kind: _as_wire(each) if kind != "B" else _base64(each) for kind, each in value.items()}
    if isinstance(value, list):
        return [_as_wire(each) for each in value]
    return value


def _base64(value: Any) -> str:
    return value if isinstance(value, str) else base64.b64encode(getattr(value, "value", value)).decode()


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


def whole_item_query(params: Mapping[str, Any]) -> dict[str, Any]:
    """A Query or Scan as DynamoDB bills it: the same keys and page, whole items, no filter."""
    plain = {
        k: v for k, v in params.items() if k not in ("Select", "ProjectionExpression", "FilterExpression")
    }
    condition = str(plain.get("KeyConditionExpression", ""))
    for placeholders in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        # Placeholders only the dropped expressions used would be refused as unused.
        used = {
            k: v for k, v in plain.get(placeholders, {}).items() if re.search(rf"{re.escape(k)}\b", condition)
        }
        if used:
            plain[placeholders] = used
        else:
            plain.pop(placeholders, None)
    return plain


def function_memory(template: Template) -> dict[str, int]:
    """Each function's configured memory (MB): its own MemorySize, or the Globals' one."""
    default = int(template.document.get("Globals", {}).get("Function", {}).get("MemorySize", 128))
    return {
        name: int(props.get("MemorySize", default))
        for name, props in template.of_type("AWS::Serverless::Function").items()
    }


def authorizer_ttl_seconds(template: Template) -> dict[str, int]:
    """How long API Gateway keeps each authorizer's answer (``ReauthorizeEvery``; 300 s by default)."""
    _, api = template.api
    return {
        name: int(spec.get("Identity", {}).get("ReauthorizeEvery", 300))
        for name, spec in api["Auth"]["Authorizers"].items()
    }


def asymmetric_key_ids(stack: LocalStack) -> set[str]:
    """Ids and ARNs of the stack's keys billed at the asymmetric rate (all but symmetric, HMAC, RSA 2048)."""
    ids = set()
    for name, props in stack.template.of_type("AWS::KMS::Key").items():
        spec = str(props.get("KeySpec", "SYMMETRIC_DEFAULT"))
        if spec.startswith(("ECC_", "RSA_")) and spec != "RSA_2048":
            ids |= {stack.physical_ids[name], stack.attributes[(name, "Arn")]}
    return ids


# ====================================================================================================
# The flows
# ====================================================================================================


@dataclass
class World:
    api: Api
    integrator: Integrator  # a client with key persistence in browsers, as the web SDK's device keys need
    public_api_key: str
    devices: dict[str, KeyPair] = field(default_factory=dict)  # the customer's browser's stored keys

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.integrator.post(path, body)
        assert answer.status == 200, (path, answer.body)
        return dict(answer.json())

    def client(self, auth_token: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One client API call of the customer's device, as the web SDK makes it."""
        answer = self.api.post(f"/client/v1{path}", body or {}, token=auth_token)
        assert answer.status == 200, (path, answer.body)
        return dict(answer.json())

    def otp_possession(self, auth_token: str, phone: str) -> dict[str, Any]:
        """The web SDK's OTP run: text the code, enter it; the last session view. A staged flow's
        authToken names the methods, so the SDK reads the session first only in a unified flow."""
        claims = jwt.decode(auth_token, options={"verify_signature": False})
        methods = (
            claims["methods"]
            if claims["flow"] == "staged"
            else self.client(auth_token, "/session")["methods"]
        )
        assert methods == ["otp"], methods
        self.client(auth_token, "/otp")
        entered = self.client(auth_token, "/otp/verify", {"otp": latest_code(self.api, phone)})
        assert entered["status"] == "passed", entered
        return entered


def token(world: World) -> None:
    answer = world.api.token_response(world.integrator.credentials.token_form())
    assert answer.status == 200, answer.body


def staged(world: World) -> None:
    """Start, OTP on the customer's device, validate, challenge with the date of birth, complete."""
    started = world.post("/v3/start", {"flowType": "mobile", "phoneNumber": STAGED_CUSTOMER})
    world.otp_possession(started["authToken"], STAGED_CUSTOMER)
    correlation = {"correlationId": started["correlationId"]}
    assert world.post("/v3/validate", correlation)["success"] is True
    assert world.post("/v3/challenge", {**correlation, "dob": "1987-06-15"})["success"] is True
    individual = {"firstName": "Noor", "lastName": "Haddad", "ssn": "123456789"}
    assert world.post("/v3/complete", {**correlation, "individual": individual})["success"] is True


def unify_first_visit(world: World) -> None:
    """No stored key: OTP possession, then the browser registers a key and unify-status binds it."""
    started = world.post("/v3/unify", {"possessionType": "mobile", "phoneNumber": UNIFY_CUSTOMER})
    session = world.otp_possession(started["authToken"], UNIFY_CUSTOMER)
    assert session["deviceKey"]["registerKey"], session
    key = KeyPair()
    body = {
        "publicKey": key.jwk,
        "signature": key.sign(session["deviceKey"]["nonce"]),
        "publicApiKey": world.public_api_key,
    }
    device_id = world.client(started["authToken"], "/device-key/register", body)["deviceId"]
    world.devices = {device_id: key}
    answer = world.post("/v3/unify-status", {"correlationId": started["correlationId"]})
    assert answer["success"] is True, answer
    assert answer["deviceId"] == device_id, answer


def unify_bound_key(world: World) -> None:
    """The browser comes back with its key: it proves the key, no SMS, and unify-status answers."""
    started = world.post("/v3/unify", {"possessionType": "mobile", "phoneNumber": UNIFY_CUSTOMER})
    session = world.client(started["authToken"], "/session")
    ((device_id, key),) = world.devices.items()
    proof = {
        "deviceId": device_id,
        "signature": key.sign(session["deviceKey"]["nonce"]),
        "publicApiKey": world.public_api_key,
    }
    assert world.client(started["authToken"], "/device-key", proof)["status"] == "passed"
    answer = world.post("/v3/unify-status", {"correlationId": started["correlationId"]})
    assert answer["success"] is True, answer
    assert answer["deviceId"] == device_id, answer


def verify(world: World) -> None:
    """Verified User for a customer Identity Manager already has (the warm-up round enrolled her)."""
    body = {
        "phoneNumber": VERIFY_CUSTOMER,
        "verificationType": "verifiedUser",
        "firstName": "Noor",
        "lastName": "Haddad",
    }
    answer = world.post("/v3/verify", body)
    assert answer["success"] == "true", answer
    assert answer["isEnrolled"] is True, answer


FLOWS: dict[str, tuple[str, Callable[[World], None]]] = {
    "staged": ("staged flow, OTP (start, validate, challenge, complete)", staged),
    "unify-new": ("unify without a bound key (OTP, key registered and bound)", unify_first_visit),
    "unify-bound": ("unify with a bound key (the device proves it)", unify_bound_key),
    "verify": ("verify, Verified User, enrolled identity", verify),
}


# ====================================================================================================
# Running and reporting
# ====================================================================================================


@dataclass
class Measured:
    """One flow's measured rounds, and the access token's rounds it takes its share of."""

    title: str
    rounds: list[list[Request]]
    token_rounds: list[list[Request]]
    flows_per_token: int

    def weighted(self) -> Iterator[tuple[Request, float]]:
        """Every request recorded, with its weight in one flow (a round's mean, the token's share)."""
        for requests in self.rounds:
            yield from ((request, 1 / len(self.rounds)) for request in requests)
        for requests in self.token_rounds:
            share = 1 / (len(self.token_rounds) * self.flows_per_token)
            yield from ((request, share) for request in requests)

    def usage(self) -> Usage:
        return sum((request.usage().scaled(weight) for request, weight in self.weighted()), Usage())

    def endpoints(self) -> list[tuple[str, float, float, float]]:
        """Per endpoint, in call order: requests and Lambda invocations per flow, billed ms per request."""
        rows: dict[str, list[float]] = {}
        for request, weight in self.weighted():
            billed = request.billed()
            row = rows.setdefault(request.endpoint, [0.0, 0.0, 0.0])
            row[0] += weight
            row[1] += weight * len(billed)
            row[2] += weight * sum(invocation.billed_ms for invocation in billed)
        return [(name, count, invocations, ms / count) for name, (count, invocations, ms) in rows.items()]

    def aws_calls(self) -> list[tuple[str, float, float, float]]:
        """Per service.Operation, most frequent first: calls, read and write request units per flow."""
        rows: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        for request, weight in self.weighted():
            for invocation in request.billed():
                for call in invocation.calls:
                    row = rows[call.name]
                    row[0] += weight
                    row[1] += weight * call.read_units
                    row[2] += weight * call.write_units
        return sorted(((name, *row) for name, row in rows.items()), key=lambda row: (-row[1], row[0]))


def build_world(api: Api) -> World:
    identities = [identity_record(STAGED_CUSTOMER), identity_record(VERIFY_CUSTOMER)]
    report = api.container.identity_import.run("\n".join(map(json.dumps, identities)), "jsonl")
    assert (report.imported, report.rejected) == (2, []), report
    integrator = api.integrator(flags=DEFAULT_FLAGS | {Flag.KEY_PERSISTENCE})
    public_api_key = api.container.clients.get(integrator.client_id).public_api_key
    assert integrator.access_token
    return World(api, integrator, public_api_key)


def measure(rounds: int, flows_per_token: int, *, preflights: bool) -> tuple[list[Measured], Api]:
    apply_all()  # moto as `phoneid dev` runs it
    with mock_aws():
        parameters = {"Tier": "production", "Region": "US", "LogLevel": "ERROR"}
        api = Api.on_moto(parameters, overrides={"PUBLIC_BASE_URL": PUBLIC_BASE_URL})
        world = build_world(api)
        recorded: dict[str, list[list[Request]]] = defaultdict(list)
        meter = Meter(api, preflights=preflights)
        with meter.installed():
            for round_number in range(rounds + 1):  # round 0 warms every function up, and enrolls
                for name, flow in [("token", token), *((n, f) for n, (_, f) in FLOWS.items())]:
                    api.clock.advance(seconds=2)  # under the per-second rate limits
                    with meter.flow() as requests:
                        flow(world)
                    if round_number:
                        recorded[name].append(requests)
        bootstrap.reset()
    measured = [
        Measured(title, recorded[name], recorded["token"], flows_per_token)
        for name, (title, _) in FLOWS.items()
    ]
    return measured, api


def print_report(
    measured: list[Measured], template: Template, flows_per_token: int, *, preflights: bool
) -> None:
    print("Cost per 1,000 flows on the production tier (US): us-east-1 on-demand prices, warm functions\n")
    for flow in measured:
        print(f"== {flow.title}")
        print(f"   {'requests per flow':<40}{'count':>8}{'Lambda':>8}{'billed ms':>11}")
        for endpoint, count, invocations, billed_ms in flow.endpoints():
            print(f"   {endpoint:<40}{_figure(count):>8}{_figure(invocations):>8}{billed_ms:>11.0f}")
        print(f"   {'AWS calls per flow':<40}{'count':>8}{'RRU':>8}{'WRU':>11}")
        for name, count, reads, writes in flow.aws_calls():
            print(f"   {name:<40}{_figure(count):>8}{_figure(reads):>8}{_figure(writes):>11}")
        usage, cost = flow.usage(), flow.usage().dollars()
        kms = f"{_figure(usage.kms_requests)} + {_figure(usage.kms_asymmetric_requests)} asymmetric requests"
        lines = [
            ("API Gateway", cost.api_gateway, f"{_figure(usage.api_requests)} requests"),
            ("Lambda requests", cost.lambda_requests, f"{_figure(usage.lambda_requests)} invocations"),
            ("Lambda GB-seconds", cost.lambda_gb_seconds, f"{usage.lambda_gb_seconds:.4f} GB-s"),
            ("DynamoDB reads", cost.dynamodb_reads, f"{_figure(usage.read_units)} read request units"),
            ("DynamoDB writes", cost.dynamodb_writes, f"{_figure(usage.write_units)} write request units"),
            ("KMS", cost.kms, kms),
        ]
        print("   $ per 1,000 flows                           per flow")
        for label, dollars, per_flow in lines:
            print(f"   {label:<20}{dollars * 1000:>9.4f}   {per_flow}")
        print(f"   {'total':<20}{cost.total * 1000:>9.4f}")
        print(f"   {'SMS, apart':<20}{cost.sms * 1000:>9.4f}   {_figure(usage.sms)} messages\n")
    print_assumptions(measured, template, flows_per_token, preflights=preflights)


def print_assumptions(
    measured: list[Measured], template: Template, flows_per_token: int, *, preflights: bool
) -> None:
    memory = function_memory(template)
    used = sorted(
        {i.function for flow in measured for request, _ in flow.weighted() for i in request.invocations}
    )
    sizes = Counter(memory[name] for name in used)
    ttl = ", ".join(f"{name} {seconds} s" for name, seconds in authorizer_ttl_seconds(template).items())
    waits = ", ".join(f"{service} {ms:.0f} ms" for service, ms in CALL_LATENCY_MS.items())
    preflight = "one CORS preflight per path per flow" if preflights else "no CORS preflights (--native)"
    print("Assumptions")
    for line in (
        f"API Gateway REST ${API_GATEWAY_PER_REQUEST * 1e6:.2f} per million requests",
        f"Lambda arm64 ${LAMBDA_PER_REQUEST * 1e6:.2f} per million requests, "
        f"${LAMBDA_PER_GB_SECOND:.10f} per GB-second",
        f"DynamoDB on-demand ${DYNAMODB_PER_WRITE_UNIT * 1e6:.3f} per million WRU (1 KB), "
        f"${DYNAMODB_PER_READ_UNIT * 1e6:.3f} per million RRU (4 KB strongly consistent, half eventually)",
        f"KMS ${KMS_PER_REQUEST * 1e4:.2f} per 10,000 requests, "
        f"${KMS_PER_ASYMMETRIC_REQUEST * 1e4:.2f} per 10,000 on asymmetric keys (other than RSA 2048)",
        f"SMS to US numbers ${SMS_US_PER_MESSAGE} per message, not in the totals",
        f"one POST /token per {flows_per_token} flows",
        f"authorizer cache ({ttl}): each token authorized once per flow",
        f"client API: the web SDK's calls, {preflight}",
        f"billed duration: handler CPU here / vCPU share (memory / {FULL_VCPU_MEMORY_MB} MB) + per AWS call "
        f"{waits}, other {OTHER_CALL_LATENCY_MS:.0f} ms (thread pool tasks overlap); rounded up to 1 ms",
        "memory: " + ", ".join(f"{mb} MB ({n} functions)" for mb, n in sorted(sizes.items())),
    ):
        print(f"  {line}")


def print_markdown(measured: list[Measured]) -> None:
    columns = ("API Gateway", "Lambda requests", "Lambda GB-s", "DynamoDB reads", "DynamoDB writes", "KMS")
    print("| Flow | " + " | ".join(columns) + " | **Total** | SMS per flow |")
    print("|---|" + "---:|" * (len(columns) + 2))
    for flow in measured:
        usage = flow.usage()
        cost = usage.dollars()
        split = (
            cost.api_gateway,
            cost.lambda_requests,
            cost.lambda_gb_seconds,
            cost.dynamodb_reads,
            cost.dynamodb_writes,
            cost.kms,
        )
        figures = " | ".join(f"{dollars * 1000:.4f}" for dollars in split)
        print(f"| {flow.title} | {figures} | **{cost.total * 1000:.4f}** | {_figure(usage.sms)} |")


def _figure(value: float) -> str:
    """A count per flow: whole when it is, else two decimals (the access token's share)."""
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per flow, after one warm-up")
    parser.add_argument("--flows-per-token", type=int, default=100, help="flows sharing one access token")
    parser.add_argument("--native", action="store_true", help="a native client: no CORS preflights")
    parser.add_argument("--markdown", action="store_true", help="also print the summary as a Markdown table")
    args = parser.parse_args()
    measured, api = measure(args.rounds, args.flows_per_token, preflights=not args.native)
    print_report(measured, api.stack.template, args.flows_per_token, preflights=not args.native)
    if args.markdown:
        print_markdown(measured)


if __name__ == "__main__":
    main()
