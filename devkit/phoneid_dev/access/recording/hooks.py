"""botocore's hooks and this process's recorder: installed for a test run, and what the
processes it starts need to record their functions' calls."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from botocore.handlers import BUILTIN_HANDLERS

from phoneid_dev.access.actions.requests import Call
from phoneid_dev.access.recording.attribution import (
    OUTSIDE,
    STACK_VARIABLE,
    Invocation,
    current_invocation,
    outside_functions,
)
from phoneid_dev.access.recording.callers import service_frame
from phoneid_dev.access.recording.facts import facts_of
from phoneid_dev.access.recording.records import Recorder

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack

RECORDS_VARIABLE = "PHONEID_ACCESS_RECORDS"  # the directory records go to; unset: nothing is recorded
ORIGIN_VARIABLE = "PHONEID_ACCESS_ORIGIN"  # the test process whose tests cause a subprocess's calls

_PARAMS = "phoneid.access.params"
_URL = "phoneid.access.url"


_recorder: Recorder | None = None


def recorder() -> Recorder | None:
    return _recorder


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


def _heard(context: dict[str, Any], response: Mapping[str, Any] | None) -> None:
    """One call answered (or failed): recorded when it is a function's."""
    if _recorder is None or _PARAMS not in context:
        return
    model, params = context.pop(_PARAMS)
    url = context.pop(_URL, None)
    invocation = current_invocation.get()
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
        elif (where := service_frame(sys._getframe(1), __file__)) is not None:
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
