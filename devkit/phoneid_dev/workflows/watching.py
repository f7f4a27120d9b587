"""Watching executions (tests, the CLI, the dev server): listing, waiting for, and logging them."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import boto3

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack


def executions(state_machine_arn: str) -> list[dict[str, Any]]:
    """Every execution of the state machine, newest first, described (status, input, output, error)."""
    sfn = boto3.client("stepfunctions")
    listed = sfn.list_executions(stateMachineArn=state_machine_arn)["executions"]
    return [dict(sfn.describe_execution(executionArn=each["executionArn"])) for each in listed]


def run(state_machine_arn: str, payload: Mapping[str, Any], timeout: float = 120.0) -> dict[str, Any]:
    """Start one execution with ``payload`` and wait for it to end; describe it.

    Raises TimeoutError after ``timeout`` seconds."""
    sfn = boto3.client("stepfunctions")
    started = sfn.start_execution(
        stateMachineArn=state_machine_arn, name=str(uuid.uuid4()), input=json.dumps(payload)
    )
    deadline = time.monotonic() + timeout
    while True:
        described = dict(sfn.describe_execution(executionArn=started["executionArn"]))
        if described["status"] != "RUNNING":
            return described
        if time.monotonic() > deadline:
            raise TimeoutError(f"{started['executionArn']} still runs after {timeout:g} s")
        time.sleep(0.05)


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
