"""Change monitor workflow, step 2 (a Distributed Map's child task, input {passId, segment}): check the
segment's active identities from where it stopped until it is done or the invocation nears its
end; output {passId, segment, done, checked, events}: the child's Choice runs it again until done."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import logger, metrics, task_entrypoint


def _check_segment(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    pass_id, segment = str(event["passId"]), int(event["segment"])
    logger.append_keys(passId=pass_id, segment=segment)
    run = container().monitor_passes.check_segment(
        pass_id, segment, time_left=lambda: context.get_remaining_time_in_millis() / 1000
    )
    progress = run.progress
    metrics.add_metric(name="IdentitiesChecked", unit=MetricUnit.Count, value=run.checked)
    metrics.add_metric(name="ChangeEvents", unit=MetricUnit.Count, value=run.events)
    return {
        "passId": pass_id,
        "segment": segment,
        "done": progress.done,
        "checked": progress.checked,
        "events": progress.events,
    }


handler = task_entrypoint(_check_segment)
