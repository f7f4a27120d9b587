"""Whose a call is: the function ``invoked(...)`` names in this context, or the harness's own."""

from __future__ import annotations

import contextvars
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoneid_dev.access.recording.facts import StackFacts, facts_of

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack

STACK_VARIABLE = "PHONEID_ACCESS_STACK"  # a Lambda worker process's stack (StackFacts as JSON)


@dataclass(frozen=True)
class Invocation:
    """The function a call is made for, and its stack (computed when a call is recorded)."""

    function: str
    facts: Callable[[], StackFacts | None]


class _Outside:
    """The harness's own calls: test set-up, the CLI, the local stack."""


OUTSIDE = _Outside()
# Unset (a thread whose context says nothing): decided by who is calling (``callers.service_frame``).
current_invocation: contextvars.ContextVar[Invocation | _Outside | None] = contextvars.ContextVar(
    "phoneid_access_invocation", default=None
)


@contextmanager
def invoked(stack: LocalStack, function: str) -> Iterator[None]:
    """The calls made inside are ``function``'s, on ``stack``."""
    token = current_invocation.set(Invocation(function, lambda: facts_of(stack)))
    try:
        yield
    finally:
        current_invocation.reset(token)


@contextmanager
def invoked_in_worker(function: str) -> Iterator[None]:
    """The calls made inside are ``function``'s, on the stack the worker's environment names."""
    token = current_invocation.set(Invocation(function, _worker_facts))
    try:
        yield
    finally:
        current_invocation.reset(token)


def outside_functions() -> None:
    """From here on, in this context, calls are the harness's own (a test's set-up, the CLI)."""
    current_invocation.set(OUTSIDE)


_worker_facts_cache: list[StackFacts | None] = []


def _worker_facts() -> StackFacts | None:
    if not _worker_facts_cache:
        text = os.environ.get(STACK_VARIABLE)
        _worker_facts_cache.append(StackFacts.from_json(json.loads(text)) if text else None)
    return _worker_facts_cache[0]
