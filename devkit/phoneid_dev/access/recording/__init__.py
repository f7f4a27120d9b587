"""Every AWS call made while a function's handler runs, written down with the function it is for.

Attribution is a context variable, ``invoked(...)``, set around each invocation (and the handler's
import, Lambda's init phase): by ``LocalStack.invoke`` in this process and by a Lambda worker process
(``phoneid_dev.processes``) in its own. In this process every function shares one bootstrap container,
its boto3 clients and its thread pools, so nothing but the context can tell whose a call is; the
service's pools run each task in a copy of the submitter's context, and so reach the function too.

What is not a function's is not recorded: the calls of the test's own set-up, the operator CLI, the
local stack itself (``phoneid_dev``) and moto's internals. A call on a thread whose context says
nothing, made from the service's code with no harness below it (a pool that lost the context), is
recorded as unattributed, and the check fails on it.

botocore's events hear each call: ``before-parameter-build`` (the parameters as the caller gave
them), ``before-call`` (where the request goes), ``after-call`` / ``after-call-error`` (the answer, for
the ARN of a secret or a 404). The handlers are added to botocore's built-in handlers, which every
session registers when it is made: moto swaps boto3's default session inside every mock, so a
handler registered on one session would miss the next. ``tests/faults.py`` patches
``BaseClient._make_api_call`` for a few tests; nothing here touches it.

Records are JSON lines, one file per process, in the directory ``PHONEID_ACCESS_RECORDS`` names; a
call is written once per process however often it is made. The stack the calls ran on (its
parameters, physical names and ARNs) is written once beside them, and each call names it by a key.

- ``facts``: a stack as the check sees it (``StackFacts``, ``facts_of``).
- ``attribution``: the function a call is for (``invoked``, ``invoked_in_worker``, ``outside_functions``).
- ``callers``: who is calling when the context does not say.
- ``records``: a process's records (``Recorder``).
- ``hooks``: botocore's hooks and this process's recorder (``install``, ``recording_to``,
  ``install_from_environment``), and the environment of the processes a recording one starts.
"""

from phoneid_dev.access.recording.attribution import (
    OUTSIDE,
    STACK_VARIABLE,
    Invocation,
    invoked,
    invoked_in_worker,
    outside_functions,
)
from phoneid_dev.access.recording.facts import StackFacts, facts_of
from phoneid_dev.access.recording.hooks import (
    ORIGIN_VARIABLE,
    RECORDS_VARIABLE,
    child_environment,
    install,
    install_from_environment,
    recorder,
    recording_to,
    worker_environment,
)
from phoneid_dev.access.recording.records import Recorder

__all__ = [
    "ORIGIN_VARIABLE",
    "OUTSIDE",
    "RECORDS_VARIABLE",
    "STACK_VARIABLE",
    "Invocation",
    "Recorder",
    "StackFacts",
    "child_environment",
    "facts_of",
    "install",
    "install_from_environment",
    "invoked",
    "invoked_in_worker",
    "outside_functions",
    "recorder",
    "recording_to",
    "worker_environment",
]
