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
- **Retry waits.** moto really sleeps ``IntervalSeconds * BackoffRate^n``; ``retry_delay_scale``
  shrinks them (tests set it to 0). The ``Retry`` policy itself is unchanged.
- **Recursion.** moto's Distributed Map workers recurse once per item they take; the recursion limit
  is raised so a worker may take a few thousand chunks.

moto's interpreter cannot run ``ItemBatcher``, EXPRESS child workflows or a real ``ResultWriter``,
and a failed child does not fail its map run: the Connect definition uses none of them and finds
failed chunks in its own deliver step, so the same ASL runs here and in AWS.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import boto3

from phoneid_dev.events import function_context, lambda_error
from phoneid_dev.patches import Patch, apply, named, register

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack

# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the stack imports this module before moto starts.

log = logging.getLogger("phoneid_dev.workflows")

# Multiplies every Retry interval of every execution (0: retry at once). Read at each wait.
retry_delay_scale = 1.0
_RECURSION_LIMIT = 10_000

_lock = threading.Lock()
_functions: dict[str, tuple[LocalStack, str]] = {}  # physical function name -> (stack, logical id)
_installed = False


# --- switching moto on ---------------------------------------------------------------------------


def enable_execution() -> None:
    """What ``mock_aws(config={"stepfunctions": {"execute_state_machine": True}, "lambda":
    {"use_docker": False}})`` sets, for the mock already running (or the server in this process)."""
    from moto.core.config import default_user_config

    # Whole sections replaced, not mutated: ``mock_aws`` restores the sections it saved on exit.
    default_user_config["stepfunctions"] = {
        **default_user_config.get("stepfunctions", {}),
        "execute_state_machine": True,
    }
    default_user_config["lambda"] = {**default_user_config.get("lambda", {}), "use_docker": False}


def install(stack: LocalStack) -> None:
    """Run ``stack``'s functions for moto's Lambda (the latest stack registered wins a name)."""
    global _installed
    enable_execution()
    with _lock:
        for logical_id in stack.template.functions:
            _functions[stack.function_name(logical_id)] = (stack, logical_id)
        if _installed:
            return
        apply(*_WORKFLOW_PATCHES)
        sys.setrecursionlimit(max(sys.getrecursionlimit(), _RECURSION_LIMIT))
        # moto warns at every definition that tolerated failures have no effect: a failed child
        # never fails its map run there, which is what ToleratedFailurePercentage 100 asks of AWS.
        logging.getLogger("moto.stepfunctions.parser.asl.parse.preprocessor").setLevel(logging.ERROR)
        _installed = True


# --- Lambda: the template's handlers ---------------------------------------------------------------


def _function_name(name_or_arn: str) -> str:
    """``name``, ``name:qualifier``, ``arn:...:function:name[:qualifier]`` → ``name``."""
    if name_or_arn.startswith("arn:"):
        return name_or_arn.split(":")[6]
    return name_or_arn.split(":", 1)[0]


def _handlers_for(echo: Callable[..., Any]) -> Callable[..., Any]:
    def invoke(
        self: Any,
        function_name: str,
        qualifier: str | None,
        body: Any,
        headers: Any,
        response_headers: Any,
    ) -> str | bytes | None:
        found = _functions.get(_function_name(function_name))
        if found is None:
            echoed: str | bytes | None = echo(self, function_name, qualifier, body, headers, response_headers)
            return echoed
        stack, logical_id = found
        event = json.loads(body) if body else {}
        if (headers or {}).get("X-Amz-Invocation-Type") == "Event":
            threading.Thread(target=run_function, args=(stack, logical_id, event), daemon=True).start()
            return b""
        result, error = run_function(stack, logical_id, event)
        if error is not None:
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps(error).encode()
        return json.dumps(result).encode()

    return invoke


def run_function(
    stack: LocalStack, logical_id: str, event: dict[str, Any]
) -> tuple[Any, dict[str, Any] | None]:
    """(result, None) or (None, Lambda's error payload) of one invocation of the handler: in a
    worker process of the function when the stack has them (``phoneid dev``), else in this one."""
    if stack.processes is not None and logical_id in stack.processes:
        return stack.processes.invoke(logical_id, event)
    try:
        return stack.invoke(logical_id, event, function_context(stack.template, logical_id)), None
    except Exception as error:
        log.info("%s raised %s", logical_id, type(error).__name__)
        return None, lambda_error(error)


# --- EventBridge: state-machine targets ------------------------------------------------------------


def _targets_with_state_machines(deliver: Callable[..., Any]) -> Callable[..., Any]:
    from moto.utilities.arns import parse_arn

    def send_to_targets(self: Any, original_event: Any, transform_input: bool = True) -> None:
        if not self.event_pattern.matches_event(original_event):
            return
        executions = [t for t in self.targets if parse_arn(t["Arn"]).service == "states"]
        for target in executions:
            start_from_event(target, original_event)
        others = [t for t in self.targets if t not in executions]
        if others:
            rest = copy.copy(self)
            rest.targets = others
            deliver(rest, original_event, transform_input)

    return send_to_targets


def start_from_event(target: Mapping[str, Any], event: Mapping[str, Any]) -> str | None:
    """Start the target state machine with the input EventBridge would give it; its execution ARN."""
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends
    from moto.utilities.arns import parse_arn

    arn = parse_arn(target["Arn"])
    try:
        execution_input = target_input(target, _as_aws_sends(event))
        backend = stepfunctions_parser_backends[arn.account][arn.region]
        execution = backend.start_execution(
            target["Arn"], name=str(uuid.uuid4()), execution_input=json.dumps(execution_input)
        )
    except Exception:  # EventBridge would retry, then dead-letter; here the reason is logged
        log.exception("EventBridge could not start %s", target["Arn"])
        return None
    log.info("EventBridge started %s", execution.execution_arn)
    return str(execution.execution_arn)


def _as_aws_sends(event: Mapping[str, Any]) -> dict[str, Any]:
    """moto's S3 events name the object's ETag ``eTag``; AWS's EventBridge events name it ``etag``."""
    fixed = copy.deepcopy(dict(event))
    obj = (fixed.get("detail") or {}).get("object")
    if isinstance(obj, dict) and "etag" not in obj and "eTag" in obj:
        obj["etag"] = obj["eTag"]
    return fixed


def _path(document: Any, path: str) -> Any:
    """A JSONPath of the simple form EventBridge input paths use: ``$.detail.object.key``."""
    if path == "$":
        return document
    value = document
    for part in path.removeprefix("$.").split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


_PLACEHOLDER = re.compile(r'"<([A-Za-z0-9_.-]+)>"|<([A-Za-z0-9_.-]+)>')


def target_input(target: Mapping[str, Any], event: Mapping[str, Any]) -> Any:
    """The target's input for ``event``: its InputTransformer, constant Input, InputPath, or the event.

    A placeholder inside quotes takes a string value as text (escaped for JSON); elsewhere it takes
    the value as JSON. A path that is not in the event gives an empty string (quoted) or null.
    """
    transformer = target.get("InputTransformer")
    if transformer:
        values = {name: _path(event, path) for name, path in transformer.get("InputPathsMap", {}).items()}

        def substitute(found: re.Match[str]) -> str:
            quoted, bare = found.group(1), found.group(2)
            name = quoted or bare
            if name not in values:
                return found.group(0)
            value = values[name]
            if quoted:
                text = value if isinstance(value, str) else ("" if value is None else json.dumps(value))
                return json.dumps(text)
            return json.dumps(value)

        return json.loads(_PLACEHOLDER.sub(substitute, transformer["InputTemplate"]))
    if "Input" in target:
        return json.loads(target["Input"])
    if "InputPath" in target:
        return _path(event, target["InputPath"])
    return dict(event)


# --- S3: one event per completed multipart upload -----------------------------------------------------

_completing = threading.local()


def _quiet_while_completing(put_object: Callable[..., Any]) -> Callable[..., Any]:
    def put_quietly_while_completing(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(_completing, "active", False):
            kwargs["disable_notification"] = True
        return put_object(self, *args, **kwargs)

    return put_quietly_while_completing


def _completed_with_one_event(complete: Callable[..., Any]) -> Callable[..., Any]:
    def complete_with_one_event(self: Any, *args: Any, **kwargs: Any) -> Any:
        _completing.active = True
        try:
            return complete(self, *args, **kwargs)
        finally:
            _completing.active = False

    return complete_with_one_event


# --- Retry waits -----------------------------------------------------------------------------------


class _ScaledTime:
    @staticmethod
    def sleep(seconds: float) -> None:
        scaled = seconds * retry_delay_scale
        if scaled > 0:
            time.sleep(scaled)


_WORKFLOW_PATCHES = register(
    Patch(
        why="a Lambda task runs the template's handler, answering as Lambda does",
        module="moto.awslambda_simple.models",
        attribute="LambdaSimpleBackend.invoke",
        replace=_handlers_for,
        expected=named("invoke"),
    ),
    Patch(
        why="an EventBridge rule starts its state-machine targets",
        module="moto.events.models",
        attribute="Rule.send_to_targets",
        replace=_targets_with_state_machines,
        expected=named("send_to_targets"),
    ),
    Patch(
        why="a completed multipart upload sends one Object Created event (its inner put none)",
        module="moto.s3.models",
        attribute="S3Backend.put_object",
        replace=_quiet_while_completing,
        expected=named("put_object"),
    ),
    Patch(
        why="a completed multipart upload sends one Object Created event",
        module="moto.s3.models",
        attribute="S3Backend.complete_multipart_upload",
        replace=_completed_with_one_event,
        expected=named("complete_multipart_upload"),
    ),
    Patch(
        why="Retry waits scaled (tests wait none), the Retry policy unchanged",
        module="moto.stepfunctions.parser.asl.component.common.retry.retrier_decl",
        attribute="time",
        replace=lambda _: _ScaledTime,
        expected=lambda original: original is time,
    ),
)


# --- provisioning (the local stack) ---------------------------------------------------------------


def provision(stack: LocalStack) -> None:
    """The template's state machines (definition from DefinitionUri, DefinitionSubstitutions
    resolved) and their EventBridge rules, in moto; the stack's functions registered for moto's Lambda."""
    install(stack)
    sfn = boto3.client("stepfunctions")
    events = boto3.client("events")
    for logical_id, props in stack.template.of_type("AWS::Serverless::StateMachine").items():
        name = stack.resolve(props["Name"]) if "Name" in props else f"{stack.name}-{logical_id}"
        definition = (stack.template.root / props["DefinitionUri"]).read_text()
        for key, value in (props.get("DefinitionSubstitutions") or {}).items():
            definition = definition.replace(f"${{{key}}}", stack.resolve(value))
        arn = sfn.create_state_machine(
            name=name,
            definition=definition,
            roleArn=f"arn:aws:iam::{stack.account_id}:role/{name}",
            type=props.get("Type", "STANDARD"),
        )["stateMachineArn"]
        stack.physical_ids[logical_id] = arn
        stack.attributes[(logical_id, "Arn")] = arn
        stack.attributes[(logical_id, "Name")] = name
        for event_name, event in (props.get("Events") or {}).items():
            if event.get("Type") not in ("EventBridgeRule", "CloudWatchEvent"):
                continue
            spec = stack.resolve_deep(event["Properties"])
            rule = f"{name}-{event_name}"[:64]
            bus = spec.get("EventBusName", "default")
            events.put_rule(Name=rule, EventPattern=json.dumps(spec["Pattern"]), EventBusName=bus)
            target: dict[str, Any] = {
                "Id": f"{logical_id}{event_name}"[:64],
                "Arn": arn,
                "RoleArn": f"arn:aws:iam::{stack.account_id}:role/{rule}",
            }
            target |= {k: spec[k] for k in ("Input", "InputPath", "InputTransformer") if k in spec}
            events.put_targets(Rule=rule, EventBusName=bus, Targets=[target])


# --- watching executions (tests, the CLI, the dev server) ----------------------------------------


def executions(state_machine_arn: str) -> list[dict[str, Any]]:
    """Every execution of the state machine, newest first, described (status, input, output, error)."""
    sfn = boto3.client("stepfunctions")
    listed = sfn.list_executions(stateMachineArn=state_machine_arn)["executions"]
    return [dict(sfn.describe_execution(executionArn=each["executionArn"])) for each in listed]


def wait(state_machine_arn: str, timeout: float = 60.0, at_least: int = 1) -> list[dict[str, Any]]:
    """Wait until the state machine has ``at_least`` executions and none is running; describe them.

    Raises TimeoutError (naming what still runs) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        described = executions(state_machine_arn)
        running = [each["executionArn"] for each in described if each["status"] == "RUNNING"]
        if len(described) >= at_least and not running:
            return described
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{len(described)} execution(s) after {timeout:g} s; still running: {running or 'none'}"
            )
        time.sleep(0.05)


class ExecutionLog:
    """Lines for the dev server's log: each execution of the stack's state machines when it starts
    and when it ends (status, and the error of a failed one)."""

    def __init__(self, stack: LocalStack) -> None:
        self._arns = {
            logical_id: stack.physical_ids[logical_id]
            for logical_id in stack.template.of_type("AWS::Serverless::StateMachine")
            if logical_id in stack.physical_ids
        }
        self._seen: dict[str, str] = {}

    def changes(self) -> list[str]:
        sfn = boto3.client("stepfunctions")
        lines = []
        for logical_id, arn in self._arns.items():
            for listed in sfn.list_executions(stateMachineArn=arn)["executions"]:
                status = listed["status"]
                if self._seen.get(listed["executionArn"]) == status:
                    continue
                self._seen[listed["executionArn"]] = status
                line = f"WORKFLOW {logical_id} {listed['name'][:8]} {status}"
                if status != "RUNNING":
                    described = sfn.describe_execution(executionArn=listed["executionArn"])
                    line += _summary(described)
                lines.append(line)
        return lines


def _summary(described: Mapping[str, Any]) -> str:
    """The error of a failed execution; a batch's state and rows; else the start of the output."""
    if described.get("error"):
        return f" ({described['error']})"
    try:
        output = json.loads(described.get("output") or "null")
    except ValueError:
        return ""
    if isinstance(output, dict) and "batchId" in output and "state" in output:
        stats = output.get("stats") or {}
        return f": batch {output['batchId'][:8]} {output['state']}, {stats.get('rowsRead', '?')} rows"
    batch = ((output or {}).get("validated") or {}).get("batch") if isinstance(output, dict) else None
    if isinstance(batch, dict) and "outcome" in batch:
        reason = f" ({batch['reason']})" if batch.get("reason") else ""
        return f": batch {str(batch.get('batchId', ''))[:8]} {batch['outcome']}{reason}"
    return f" {json.dumps(output)[:160]}"
