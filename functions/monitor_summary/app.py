"""Monitor workflow, step 3 (input {passId}): the pass's totals over its segments, kept with the
pass (``phoneid webhooks monitor-status``); output {passId, totalSegments, segmentsDone, checked,
events, startedAt, finishedAt}."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import logger, metrics, task_entrypoint


def _summarise(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    pass_id = str(event["passId"])
    logger.append_keys(passId=pass_id)
    summary = container().monitor_passes.summarise(pass_id)
    metrics.add_metric(name="MonitorSegmentsDone", unit=MetricUnit.Count, value=summary.segments_done)
    metrics.add_metric(name="MonitorPassesFinished", unit=MetricUnit.Count, value=int(summary.finished))
    return {
        "passId": summary.pass_id,
        "totalSegments": summary.total_segments,
        "segmentsDone": summary.segments_done,
        "checked": summary.checked,
        "events": summary.events,
        "startedAt": summary.started_at.isoformat(),
        "finishedAt": summary.finished_at.isoformat() if summary.finished_at else None,
    }


handler = task_entrypoint(_summarise)
