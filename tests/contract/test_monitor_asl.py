"""statemachines/monitor.asl.json and template.yaml agree: the placeholders are the substitutions, the
tasks call the monitor's functions, and only Step Functions' and Lambda's own errors are retried."""

from __future__ import annotations

import json
import re

from phoneid_dev.template import template
from tests.contract.test_connect_asl import _SERVICE_ERRORS, state_machine, states


def test_the_placeholders_are_exactly_the_substitutions() -> None:
    props, text = state_machine("MonitorStateMachine")

    placeholders = set(re.findall(r"\$\{([A-Za-z0-9]+)\}", text))

    assert placeholders == set(props["DefinitionSubstitutions"])
    json.loads(text)  # plain JSON before substitution


def test_the_tasks_call_the_monitors_functions() -> None:
    props, _ = state_machine("MonitorStateMachine")

    arns = {
        key: value["Fn::GetAtt"][0]
        for key, value in props["DefinitionSubstitutions"].items()
        if key.endswith("Arn")
    }

    assert arns == {
        "PlanFunctionArn": "MonitorPlanFunction",
        "CheckSegmentFunctionArn": "WebhookMonitorFunction",
        "SummaryFunctionArn": "MonitorSummaryFunction",
    }
    assert set(arns.values()) <= set(template().functions)


def test_every_task_is_retried_on_service_errors_only_and_the_segments_loop_until_done() -> None:
    _, text = state_machine("MonitorStateMachine")
    definition = json.loads(text)

    tasks = [state for state in states(definition) if state["Type"] == "Task"]
    named = {error for task in tasks for retry in task["Retry"] for error in retry["ErrorEquals"]}

    assert len(tasks) == 3
    assert all(_SERVICE_ERRORS.match(error) for error in named)
    segments = definition["States"]["CheckSegments"]
    assert segments["ItemProcessor"]["ProcessorConfig"] == {
        "Mode": "DISTRIBUTED",
        "ExecutionType": "STANDARD",
    }
    loop = segments["ItemProcessor"]["States"]["SegmentDone"]
    assert (loop["Choices"][0]["Variable"], loop["Default"]) == ("$.done", "CheckSegment")
