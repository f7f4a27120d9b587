"""Scheduled hourly (and run by a signer whose window has no key): makes the current and the next
window's token signing keys, and forgets the private halves of closed windows."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import metrics, task_entrypoint


def _rotate(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = container().token_key_rotation.run()
    metrics.add_metric(name="TokenKeysCreated", unit=MetricUnit.Count, value=len(report.created))
    return report.as_dict()


handler = task_entrypoint(_rotate)
