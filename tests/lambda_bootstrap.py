"""What Lambda's bootstrap does for one invocation, in an interpreter ``tests/lambda_runtime.py`` starts
(no site-packages): the import path it is given, the handler imported from the function's code, one
event read from a file, the answer (or Lambda's error payload) written to another.

``python -I -S -B lambda_bootstrap.py PATHS_JSON MODULE.HANDLER EVENT_FILE ANSWER_FILE``. Only the
standard library here: nothing else is importable before the path is set.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
import uuid
from pathlib import Path
from typing import Any


class LambdaContext:
    """Lambda's context object, from the variables SAM sets for the function."""

    def __init__(self, timeout_seconds: float) -> None:
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "function")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"))
        region = os.environ.get("AWS_REGION", "us-east-1")
        self.invoked_function_arn = f"arn:aws:lambda:{region}:123456789012:function:{self.function_name}"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self.identity = None
        self.client_context = None
        self._deadline = time.monotonic() + timeout_seconds

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _error(error: BaseException, error_type: str | None = None) -> dict[str, Any]:
    return {
        "errorType": error_type or type(error).__name__,
        "errorMessage": str(error),
        "stackTrace": traceback.format_exception(error),
    }


def main(paths: str, handler: str, event_file: str, answer_file: str) -> None:
    sys.path[:0] = json.loads(paths)
    module_name, _, name = handler.rpartition(".")
    context = LambdaContext(float(os.environ.get("AWS_LAMBDA_FUNCTION_TIMEOUT", "3")))
    try:
        function = getattr(importlib.import_module(module_name), name)
    except Exception as error:  # what Lambda reports when the init phase fails
        answer = {"error": _error(error, "Runtime.ImportModuleError")}
    else:
        event = json.loads(Path(event_file).read_text())
        try:
            answer = {"result": function(event, context)}
        except Exception as error:
            answer = {"error": _error(error)}
    Path(answer_file).write_text(json.dumps(answer, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:5])
