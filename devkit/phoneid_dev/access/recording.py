"""Every AWS call made while a function's handler runs, written down with the function it is for.

Attribution is a context variable, ``invoked(...)``, set around each invocation (and the handler's
import, Lambda's init phase): by ``LocalStack.invoke`` in this process and by a Lambda worker process
(``phoneid_dev.processes``) in its own. In this process every function shares one bootstrap container,
its boto3 clients and its thread pools, so nothing but the context can tell whose a call is; the
service's pools run each task in a copy of the submitter's context, and so reach the function too.

What is not a function's is not recorded: the calls of the test's own set-up, the operator CLI, the
local stack itself (``phoneid_dev``) and moto's internals. A call on a thread whose context says
nothing, made from the service's code with no harness below it (a pool that lost the context), is
recorded as unattributed, and the check fails on it.

botocore's events hear each call: ``before-parameter-build`` (the parameters as the caller gave
them), ``before-call`` (where the request goes), ``after-call`` / ``after-call-error`` (the answer, for
the ARN of a secret or a 404). The handlers are added to botocore's built-in handlers, which every
session registers when it is made: moto swaps boto3's default session inside every mock, so a
handler registered on one session would miss the next. ``tests/faults.py`` patches
``BaseClient._make_api_call`` for a few tests; nothing here touches it.

Records are JSON lines, one file per process, in the directory ``PHONEID_ACCESS_RECORDS`` names; a
call is written once per process however often it is made. The stack the calls ran on (its
parameters, physical names and ARNs) is written once beside them, and each call names it by a key.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import boto3
from botocore.handlers import BUILTIN_HANDLERS

import phoneid
from phoneid_dev.access.actions.registry import requests_of
from phoneid_dev.access.actions.requests import Call, Stack, Unmapped
from phoneid_dev.template import repository_root

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack

RECORDS_VARIABLE = "PHONEID_ACCESS_RECORDS"  # the directory records go to; unset: nothing is recorded
ORIGIN_VARIABLE = "PHONEID_ACCESS_ORIGIN"  # the test process whose tests cause a subprocess's calls
STACK_VARIABLE = "PHONEID_ACCESS_STACK"  # a Lambda worker process's stack (StackFacts as JSON)


@dataclass(frozen=True)
class StackFacts:
    """What the check needs of a stack to resolve the template's policies as CloudFormation would."""

    name: str
    region: str
    account: str
    parameters: Mapping[str, str]  # every parameter, defaults included
    refs: Mapping[str, str]  # logical id -> what Ref gives
    attributes: Mapping[str, str]  # "Logical.Attribute" -> what Fn::GetAtt gives
    endpoints: Mapping[str, str] = field(default_factory=dict)  # local endpoint -> the AWS one it stands for
    bucket_keys: Mapping[str, str] = field(default_factory=dict)  # bucket -> its default KMS key's ARN

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "region": self.region,
            "account": self.account,
            "parameters": dict(self.parameters),
            "refs": dict(self.refs),
            "attributes": dict(self.attributes),
            "endpoints": dict(self.endpoints),
            "bucket_keys": dict(self.bucket_keys),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StackFacts:
        return cls(
            name=str(data["name"]),
            region=str(data["region"]),
            account=str(data["account"]),
            parameters=dict(data["parameters"]),
            refs=dict(data["refs"]),
            attributes=dict(data["attributes"]),
            endpoints=dict(data.get("endpoints") or {}),
            bucket_keys=dict(data.get("bucket_keys") or {}),
        )

    @cached_property
    def key(self) -> str:
        """Names the stack in the records of its calls (worked out once: every recorded call asks)."""
        canonical = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(canonical).hexdigest()[:16]


def facts_of(stack: LocalStack) -> StackFacts:
    """``stack`` as the check sees it (kept on the stack once it is complete)."""
    size = (len(stack.physical_ids), len(stack.attributes))
    kept: tuple[tuple[int, int], StackFacts] | None = stack.__dict__.get("_access_facts")
    if kept is not None and kept[0] == size:
        return kept[1]
    function_environment = {
        name: value
        for function in stack.template.functions.values()
        for name, value in function.environment.items()
    }
    facts = StackFacts(
        name=stack.name,
        region=stack.aws_region,
        account=stack.account_id,
        parameters={**stack.template.parameter_defaults(), **stack.parameters},
        refs=dict(stack.physical_ids),
        attributes={f"{logical_id}.{name}": value for (logical_id, name), value in stack.attributes.items()},
        endpoints={
            local: stack.resolve(function_environment[name])
            for name, local in stack.overrides.items()
            if name in function_environment and local.startswith("http")
        },
        bucket_keys=_bucket_keys(stack),
    )
    stack.__dict__["_access_facts"] = (size, facts)
    return facts


def _bucket_keys(stack: LocalStack) -> dict[str, str]:
    """Each bucket encrypted by default with a KMS key of the template, and that key's ARN."""
    found = {}
    for logical_id, props in stack.template.of_type("AWS::S3::Bucket").items():
        rules = (props.get("BucketEncryption") or {}).get("ServerSideEncryptionConfiguration") or []
        for rule in rules:
            default = rule.get("ServerSideEncryptionByDefault") or {}
            if default.get("SSEAlgorithm") == "aws:kms" and "KMSMasterKeyID" in default:
                found[stack.physical_ids[logical_id]] = str(stack.resolve(default["KMSMasterKeyID"]))
    return found


@dataclass(frozen=True)
class Invocation:
    """The function a call is made for, and its stack (computed when a call is recorded)."""

    function: str
    facts: Callable[[], StackFacts | None]


class _Outside:
    """The harness's own calls: test set-up, the CLI, the local stack."""


OUTSIDE = _Outside()
# Unset (a thread whose context says nothing): decided by who is calling (``_service_frame``).
_current: contextvars.ContextVar[Invocation | _Outside | None] = contextvars.ContextVar(
    "phoneid_access_invocation", default=None
)


@contextmanager
def invoked(stack: LocalStack, function: str) -> Iterator[None]:
    """The calls made inside are ``function``'s, on ``stack``."""
    token = _current.set(Invocation(function, lambda: facts_of(stack)))
    try:
        yield
    finally:
        _current.reset(token)


@contextmanager
def invoked_in_worker(function: str) -> Iterator[None]:
    """The calls made inside are ``function``'s, on the stack the worker's environment names."""
    token = _current.set(Invocation(function, _worker_facts))
    try:
        yield
    finally:
        _current.reset(token)


def outside_functions() -> None:
    """From here on, in this context, calls are the harness's own (a test's set-up, the CLI)."""
    _current.set(OUTSIDE)


_worker_facts_cache: list[StackFacts | None] = []


def _worker_facts() -> StackFacts | None:
    if not _worker_facts_cache:
        text = os.environ.get(STACK_VARIABLE)
        _worker_facts_cache.append(StackFacts.from_json(json.loads(text)) if text else None)
    return _worker_facts_cache[0]


def worker_environment(stack: LocalStack) -> dict[str, str]:
    """What a Lambda worker process of ``stack`` needs to record its calls (nothing when not recording)."""
    if _recorder is None:
        return {}
    return {STACK_VARIABLE: json.dumps(facts_of(stack).to_json())}


def child_environment() -> dict[str, str]:
    """What a ``phoneid dev`` started by a test needs to record its functions' calls."""
    if _recorder is None:
        return {}
    return {RECORDS_VARIABLE: str(_recorder.directory), ORIGIN_VARIABLE: str(_recorder.origin)}


# --- who is calling, when the context does not say ------------------------------------------------------

_PHONEID = Path(phoneid.__file__).resolve().parent
_DEVKIT = Path(__file__).resolve().parents[2]  # devkit/: the local stack and the operator's CLI


@dataclass(frozen=True)
class _CodeRoots:
    """Where the service's code and the harness's are, as the prefixes of their files' paths."""

    root: Path
    service: tuple[str, ...]
    harness: tuple[str, ...]


@cache
def _code_roots() -> _CodeRoots:
    root = repository_root()
    return _CodeRoots(
        root,
        service=(str(root / "functions") + os.sep, str(_PHONEID) + os.sep),
        harness=(
            str(root / "tests") + os.sep,
            str(root / "bench") + os.sep,
            str(_DEVKIT) + os.sep,
        ),
    )


def _service_frame(frame: FrameType | None) -> str | None:
    """Where the service's own code is calling from, when no harness code runs below it on this
    thread (a task of a pool that lost the function's context); None for the harness's calls and
    for those made by libraries alone (moto's threads)."""
    roots = _code_roots()
    outermost: str | None = None
    while frame is not None:
        path = frame.f_code.co_filename
        if path == __file__:  # the recorder's own frames
            frame = frame.f_back
            continue
        if path.startswith(roots.harness):
            return None
        if path.startswith(roots.service):
            outermost = f"{Path(path).relative_to(roots.root)}:{frame.f_lineno}"
        frame = frame.f_back
    return outermost


# --- the recorder -----------------------------------------------------------------------------------------

_PARAMS = "phoneid.access.params"
_URL = "phoneid.access.url"


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


def recorder() -> Recorder | None:
    return _recorder


def _heard(context: dict[str, Any], response: Mapping[str, Any] | None) -> None:
    """One call answered (or failed): recorded when it is a function's."""
    if _recorder is None or _PARAMS not in context:
        return
    model, params = context.pop(_PARAMS)
    url = context.pop(_URL, None)
    invocation = _current.get()
    if invocation is OUTSIDE:
        return
    service, operation = model.service_model.service_name, model.name
    try:
        if isinstance(invocation, Invocation):
            facts = invocation.facts()
            call = Call(
                service=service,
                operation=operation,
                params=params,
                region=str(context.get("client_region") or "us-east-1"),
                account=facts.account if facts is not None else "",
                url=url,
                response=response,
            )
            _recorder.call(call, invocation.function, facts)
        elif (where := _service_frame(sys._getframe(1))) is not None:
            _recorder.unattributed(service, operation, where)
    except Exception as error:  # a recorder fault must not fail the call; the check fails on it instead
        _recorder.failed(service, operation, error)


def _on_parameters(params: Mapping[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
    context[_PARAMS] = (model, dict(params))


def _on_request(params: Mapping[str, Any], context: dict[str, Any], **_: Any) -> None:
    context[_URL] = params.get("url")


def _on_answer(parsed: Mapping[str, Any], context: dict[str, Any], **_: Any) -> None:
    _heard(context, parsed)


def _on_error(context: dict[str, Any], **_: Any) -> None:
    _heard(context, None)


_HOOKS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("before-parameter-build", _on_parameters),
    ("before-call", _on_request),
    ("after-call", _on_answer),
    ("after-call-error", _on_error),
)
_hooked = False


def _hook() -> None:
    """The handlers registered by every botocore session made from now on, and by boto3's default
    session if it is already made (for its clients made from now on)."""
    global _hooked
    if not _hooked:
        BUILTIN_HANDLERS.extend(_HOOKS)
        _hooked = True
    if boto3.DEFAULT_SESSION is not None:
        for event, handler in _HOOKS:
            boto3.DEFAULT_SESSION.events.register(event, handler, unique_id=f"phoneid-access-{event}")


def install(directory: Path, origin: int | None = None) -> Recorder:
    """Record this process's function calls into ``directory`` from now on; the calls of the
    context this is called in are the harness's."""
    global _recorder
    if _recorder is None:
        _hook()
        _recorder = Recorder(directory.resolve(), origin or os.getpid())
    outside_functions()
    return _recorder


@contextmanager
def recording_to(directory: Path) -> Iterator[Recorder]:
    """This process's function calls recorded into ``directory`` for a while (a test of the
    recorder), then where they were recorded before, if anywhere."""
    global _recorder
    _hook()
    previous, _recorder = _recorder, Recorder(directory.resolve(), os.getpid())
    try:
        yield _recorder
    finally:
        _recorder = previous


def install_from_environment() -> Recorder | None:
    """``install`` when ``PHONEID_ACCESS_RECORDS`` asks for it (a test run, or a process it started)."""
    directory = os.environ.get(RECORDS_VARIABLE)
    if not directory:
        return None
    origin = os.environ.get(ORIGIN_VARIABLE)
    return install(Path(directory), int(origin) if origin else None)
