"""The workflow's steps as its execution's history in moto's Step Functions tells them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STEPS = ("Validate", "VerifyChunks", "Deliver")
# The function each step's Lambda task runs (its worker processes are named by it).
STEP_FUNCTIONS = {
    "Validate": "ConnectValidateFunction",
    "VerifyChunks": "ConnectVerifyChunkFunction",
    "Deliver": "ConnectDeliverFunction",
}


@dataclass
class Step:
    name: str
    began: float
    ended: float

    @property
    def seconds(self) -> float:
        return self.ended - self.began


def _steps(sfn: Any, execution_arn: str) -> tuple[list[Step], list[dict[str, Any]]]:
    """Validate, VerifyChunks (the map) and Deliver, from the execution's history: entered → exited."""
    events: list[dict[str, Any]] = []
    token = None
    while True:
        page = sfn.get_execution_history(
            executionArn=execution_arn, maxResults=1000, **({"nextToken": token} if token else {})
        )
        events += page["events"]
        token = page.get("nextToken")
        if not token:
            break
    entered: dict[str, float] = {}
    steps = []
    for event in events:
        kind = event["type"]
        if kind.endswith("StateEntered"):
            entered[event["stateEnteredEventDetails"]["name"]] = event["timestamp"].timestamp()
        elif kind.endswith("StateExited"):
            name = event["stateExitedEventDetails"]["name"]
            if name in STEPS and name in entered:
                steps.append(Step(name, entered[name], event["timestamp"].timestamp()))
    return steps, events


def execution_of(sfn: Any, machine: str, key: str) -> tuple[dict[str, Any], list[Step], list[dict[str, Any]]]:
    """The execution that processed the upload ``key`` (described), its steps and its events. An
    upload may start more than one (a redelivered event); the batch's state lets one through, so
    the one that got furthest is it."""
    found: list[tuple[int, dict[str, Any], list[Step], list[dict[str, Any]]]] = []
    for listed in sfn.list_executions(stateMachineArn=machine)["executions"]:
        described = sfn.describe_execution(executionArn=listed["executionArn"])
        if key not in (described.get("input") or ""):
            continue  # the warm-up's
        steps, events = _steps(sfn, listed["executionArn"])
        found.append((len(steps) * 1_000_000 + len(events), described, steps, events))
    if not found:
        raise RuntimeError(f"no execution of {machine} names {key}")
    _, described, steps, events = max(found, key=lambda each: each[0])
    return described, steps, events
