"""The template's state machines, run by moto's Step Functions interpreter in this process.

What AWS does and moto does not, added here (each a small patch, installed once per process):

- **Execution.** moto runs ASL only in its "execute" mode (``execute_state_machine``), and runs Lambda
  without Docker only with ``use_docker: False``; both are switched on before the state machines are
  created (``enable_execution``; inside ``mock_aws()`` the switch ends with the mock, in the server it
  lasts the process).
- **Lambda tasks.** moto's Docker-less Lambda (``LambdaSimpleBackend.invoke``) echoes its input. Here
  it runs the template's handler instead, found by function name or ARN among the functions of the
  registered stacks (in the function's worker processes under ``phoneid dev``,
  ``phoneid_dev.processes``; in this process otherwise, ``LocalStack.invoke``; with the function's
  own timeout in its context), and answers as Lambda does: the handler's JSON result, or, when it
  raises, ``{"errorType": <exception class name>, "errorMessage": ...}`` with the
  ``X-Amz-Function-Error`` header, so the state machine's ``Retry``/``Catch`` match on the class
  name (``ChunkThrottled``).
- **EventBridge → Step Functions.** moto's rules deliver to logs, SQS, archives and buses only (a
  state-machine target raises, which also stops delivery to later targets). Here a target that is a
  state machine starts an execution, with the input the target's ``InputTransformer`` (or
  ``Input``/``InputPath``) gives, as EventBridge would. moto spells the S3 event's ``etag`` as
  ``eTag``; the spelling AWS sends is added before transforming. Other targets go to moto as before.
- **One event per multipart upload.** moto's ``CompleteMultipartUpload`` stores the object with its
  ``PutObject`` (which sends an ``Object Created`` event) and then sends the event of the completed
  upload: two executions for one file. S3 sends one; here the inner put sends none.
- **Retry waits.** moto really sleeps ``IntervalSeconds * BackoffRate^n``;
  ``retry_waits.retry_delay_scale`` shrinks them (tests set it to 0). The ``Retry`` policy itself is
  unchanged.
- **Recursion.** moto's Distributed Map workers recurse once per item they take; the recursion limit
  is raised so a worker may take a few thousand chunks.

moto's interpreter cannot run ``ItemBatcher``, EXPRESS child workflows or a real ``ResultWriter``,
and a failed child does not fail its map run: the Connect definition uses none of them and finds
failed chunks in its own deliver step, so the same ASL runs here and in AWS.

- ``execution``: moto's execution switched on and the patches below applied (``install``).
- ``lambda_tasks``, ``eventbridge``, ``s3_events``, ``retry_waits``: one patch's module each, as listed
  above.
- ``provisioning``: the template's state machines and rules created for a stack (``provision``).
- ``watching``: executions listed, started and waited for, and logged (``executions``, ``run``,
  ``wait``, ``ExecutionLog``).
"""

from phoneid_dev.workflows.eventbridge import start_from_event, target_input
from phoneid_dev.workflows.execution import enable_execution, install
from phoneid_dev.workflows.lambda_tasks import run_function
from phoneid_dev.workflows.provisioning import provision
from phoneid_dev.workflows.watching import ExecutionLog, executions, run, wait

__all__ = [
    "ExecutionLog",
    "enable_execution",
    "executions",
    "install",
    "provision",
    "run",
    "run_function",
    "start_from_event",
    "target_input",
    "wait",
]
