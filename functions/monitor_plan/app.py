"""Monitor workflow, step 1 (started by the schedule, input {passId?}): plan the pass, its id
(default: the moment it starts) and its parallel-scan segments; output {passId, busy, totalSegments,
segments: [0, 1, ...]}, the Map's items. A pass planned before keeps its plan; while
another pass runs, busy is true and the execution ends without checking anything."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import logger, metrics, task_entrypoint


def _plan(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    requested = event.get("passId")
    outcome = container().monitor_passes.plan(str(requested) if requested else None)
    planned = outcome.monitor_pass
    logger.append_keys(passId=planned.pass_id)
    if outcome.busy:
        return {
            "passId": planned.pass_id,
            "busy": True,
            "totalSegments": planned.total_segments,
            "segments": [],
        }
    metrics.add_metric(name="MonitorSegmentsPlanned", unit=MetricUnit.Count, value=planned.total_segments)
    return {
        "passId": planned.pass_id,
        "busy": False,
        "totalSegments": planned.total_segments,
        # Numbers only (the Map adds the pass id): the state's payload stays small for 10,000.
        "segments": list(range(planned.total_segments)),
    }


handler = task_entrypoint(_plan)
