"""Scheduled (EventBridge Scheduler, template parameter MonitorSchedule): one change-monitor pass over
every active enrolled identity; change events are recorded and queued for the clients' webhooks."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import metrics, task_entrypoint


def _monitor(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = container().monitor.run(time_left=lambda: context.get_remaining_time_in_millis() / 1000)
    metrics.add_metric(name="IdentitiesChecked", unit=MetricUnit.Count, value=report.identities)
    metrics.add_metric(name="ChangeEvents", unit=MetricUnit.Count, value=report.events)
    return report.as_dict()


handler = task_entrypoint(_monitor)
