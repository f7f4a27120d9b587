"""Scheduled every minute: appends the decision records written since the last run to their
clients' histories, from the records table's stream (docs/adr/0120-a-decision-history-verified-offline.md)."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import metrics, task_entrypoint


def _append(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = container().decision_sequencer.run(lambda: context.get_remaining_time_in_millis() / 1000)
    metrics.add_metric(name="DecisionLeavesAppended", unit=MetricUnit.Count, value=report.appended)
    return report.as_dict()


handler = task_entrypoint(_append)
