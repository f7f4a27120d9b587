"""SessionsTable's stream, filtered to TTL's deletions: a flow that expired unanswered gets its
decision record (docs/decision-records.md#what-is-recorded)."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.tasks import metrics, task_entrypoint

# What DynamoDB's TTL names as the deleter of an expired item (the template's filter asks the same).
TTL_PRINCIPAL = "dynamodb.amazonaws.com"


def _expired(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    images = [
        record["dynamodb"]["OldImage"]
        for record in event.get("Records", [])
        if record.get("eventName") == "REMOVE"
        and record.get("userIdentity", {}).get("principalId") == TTL_PRINCIPAL
        and "OldImage" in record.get("dynamodb", {})
    ]
    recorded = container().expired_flows.record(images)
    metrics.add_metric(name="ExpiredFlowsRecorded", unit=MetricUnit.Count, value=recorded)
    return {"expired": recorded}


handler = task_entrypoint(_expired)
