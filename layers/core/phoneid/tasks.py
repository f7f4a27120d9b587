"""The Lambda entrypoint every non-HTTP function shares (workflow steps, queue consumers, schedules):
one decorator stack, and metrics cleared after each invocation.

Also what every handler shares without the REST resolver: tracing (``traced``, the HTTP entrypoint's
too) and the logger of the authorizers and the WebSocket handler.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()
metrics = Metrics()

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


@functools.cache
def _tracer() -> Tracer | None:
    """The X-Ray tracer, or None when tracing is off by Powertools' documented rule
    (``phoneid.config.Tracing``: POWERTOOLS_TRACE_DISABLED, or not in Lambda, or under SAM local).
    ``Tracer()`` imports the X-Ray SDK, which costs more than the rest of a handler's import, and
    patches boto3: only an invocation that is traced pays for it."""
    from phoneid.config import tracing  # at the first invocation, as the container's settings

    if not tracing().enabled:
        return None
    return Tracer(disabled=False)


def traced(handler: Handler) -> Handler:
    """``Tracer().capture_lambda_handler(capture_response=False)``, decided at the first invocation.

    Lambda's Active tracing records each invocation without any SDK; the tracer adds the handler's
    subsegment (cold start and service annotations) and the AWS calls under it."""

    @functools.cache
    def decorated() -> Handler:
        tracer = _tracer()
        if tracer is None:
            return handler
        wrapped: Handler = tracer.capture_lambda_handler(handler, capture_response=False)
        return wrapped

    @functools.wraps(handler)
    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return decorated()(event, context)

    return run


def metrics_cleared(handler: Handler, used: Metrics) -> Handler:
    """With POWERTOOLS_METRICS_DISABLED (local stack, tests) Powertools skips the flush and keeps every
    value; clearing after each invocation keeps memory flat. On Lambda it is a no-op."""

    def run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        try:
            return handler(event, context)
        finally:
            used.clear_metrics()

    return run


def task_entrypoint(work: Handler) -> Handler:
    """The Lambda handler for ``work``: logging with the invocation's context, tracing, metrics."""

    @logger.inject_lambda_context(clear_state=True)
    @traced
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return work(event, context)

    return metrics_cleared(handler, metrics)
