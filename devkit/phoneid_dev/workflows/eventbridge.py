"""EventBridge → Step Functions: a rule's state-machine target starts an execution, with the input
the target's ``InputTransformer`` (or ``Input``/``InputPath``) gives, as EventBridge would; other
targets go to moto as before."""

from __future__ import annotations

import copy
import json
import logging
import re
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from phoneid_dev.patches import Patch, named, register

if TYPE_CHECKING:
    pass

# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the stack imports this module before moto starts.

log = logging.getLogger(__name__)


def targets_with_state_machines(deliver: Callable[..., Any]) -> Callable[..., Any]:
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


PATCHES = register(
    Patch(
        why="an EventBridge rule starts its state-machine targets",
        module="moto.events.models",
        attribute="Rule.send_to_targets",
        replace=targets_with_state_machines,
        expected=named("send_to_targets"),
    ),
)
