"""The Lambda entrypoint every non-HTTP function shares (workflow steps, queue consumers, schedules):
one decorator stack, and metrics cleared after each invocation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()
tracer = Tracer()
metrics = Metrics()

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


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
    @tracer.capture_lambda_handler(capture_response=False)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        return work(event, context)

    return metrics_cleared(handler, metrics)
