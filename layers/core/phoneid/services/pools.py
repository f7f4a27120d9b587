"""Work handed to a thread pool runs in a copy of the submitter's context (``contextvars``), as a call
on the submitting thread would, and as asyncio runs its tasks: what a request keeps in its context
(Powertools' per-request log keys, the local stack's record of whose AWS calls these are) reaches
the pool's threads, whichever request the pool's threads served before."""

from __future__ import annotations

import concurrent.futures
import contextvars
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def submit_in_context(
    pool: concurrent.futures.Executor, task: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
) -> concurrent.futures.Future[T]:
    """``pool.submit(task, *args, **kwargs)``, the task running in a copy of this context."""
    context = contextvars.copy_context()

    def run() -> T:
        return context.run(task, *args, **kwargs)

    return pool.submit(run)
