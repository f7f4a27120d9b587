"""Lambda tasks: moto's Docker-less Lambda (``LambdaSimpleBackend.invoke``) echoes its input; here it
runs the template's handler, found by function name or ARN among the functions of the registered
stacks, and answers as Lambda does."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from phoneid_dev.events import function_context, lambda_error
from phoneid_dev.patches import Patch, named, register

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack

log = logging.getLogger(__name__)

_functions_lock = threading.Lock()
_functions: dict[str, tuple[LocalStack, str]] = {}  # physical function name -> (stack, logical id)


def serve_functions(stack: LocalStack) -> None:
    """``stack``'s functions run for moto's Lambda (the latest stack registered wins a name)."""
    with _functions_lock:
        for logical_id in stack.template.functions:
            _functions[stack.function_name(logical_id)] = (stack, logical_id)


def _function_name(name_or_arn: str) -> str:
    """``name``, ``name:qualifier``, ``arn:...:function:name[:qualifier]`` → ``name``."""
    if name_or_arn.startswith("arn:"):
        return name_or_arn.split(":")[6]
    return name_or_arn.split(":", 1)[0]


def handlers_for(echo: Callable[..., Any]) -> Callable[..., Any]:
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


PATCHES = register(
    Patch(
        why="a Lambda task runs the template's handler, answering as Lambda does",
        module="moto.awslambda_simple.models",
        attribute="LambdaSimpleBackend.invoke",
        replace=handlers_for,
        expected=named("invoke"),
    ),
)
