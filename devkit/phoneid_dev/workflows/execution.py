"""Switching moto's Step Functions execution on, and the workflow patches with it, once per process."""

from __future__ import annotations

import logging
import sys
import threading
from typing import TYPE_CHECKING

from phoneid_dev.patches import apply

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack

# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the stack imports this module before moto starts.

from phoneid_dev.workflows import eventbridge, lambda_tasks, retry_waits, s3_events

_RECURSION_LIMIT = 10_000

_lock = threading.Lock()
_installed = False


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
    lambda_tasks.serve_functions(stack)
    with _lock:
        if _installed:
            return
        apply(*lambda_tasks.PATCHES, *eventbridge.PATCHES, *s3_events.PATCHES, *retry_waits.PATCHES)
        sys.setrecursionlimit(max(sys.getrecursionlimit(), _RECURSION_LIMIT))
        # moto warns at every definition that tolerated failures have no effect: a failed child
        # never fails its map run there, which is what ToleratedFailurePercentage 100 asks of AWS.
        logging.getLogger("moto.stepfunctions.parser.asl.parse.preprocessor").setLevel(logging.ERROR)
        _installed = True
