"""Connect workflow, step 1 (Step Functions task; input {bucket, key, versionId, etag} from the S3
Object Created event): claim the file's batch, check it, cut its valid rows into chunk objects.
Returns {batchId, outcome: accepted | rejected | duplicate, manifestKey?, chunks?, reason?}."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.api.connect_steps import UploadedObject
from phoneid.bootstrap import container
from phoneid.tasks import metrics, task_entrypoint

_OUTCOME_METRICS = {"accepted": "ConnectFilesAccepted", "rejected": "ConnectFilesRejected"}


def _validate(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    upload = UploadedObject.model_validate(event)
    result = container().connect.validate.run(
        upload.bucket, upload.key, version_id=upload.version_id, etag=upload.etag
    )
    metric = _OUTCOME_METRICS.get(result.outcome, "ConnectFilesDuplicate")
    metrics.add_metric(name=metric, unit=MetricUnit.Count, value=1)
    return result.to_json()


handler = task_entrypoint(_validate)
