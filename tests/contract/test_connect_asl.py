"""statemachines/connect.asl.json and template.yaml agree: the placeholders are the substitutions,
and every error a Retry or Catch names is one the steps raise (or one of Step Functions' own)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from phoneid.domain import connect
from phoneid_dev.template import ROOT, template

_SERVICE_ERRORS = re.compile(r"^(States|Lambda)\.[A-Za-z]+$")


def state_machine(logical_id: str = "ConnectStateMachine") -> tuple[dict[str, Any], str]:
    props = template().of_type("AWS::Serverless::StateMachine")[logical_id]
    return dict(props), (ROOT / props["DefinitionUri"]).read_text()


def states(definition: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for state in definition["States"].values():
        yield state
        if "ItemProcessor" in state:
            yield from states(state["ItemProcessor"])


def test_the_placeholders_are_exactly_the_substitutions() -> None:
    props, text = state_machine()

    placeholders = set(re.findall(r"\$\{([A-Za-z0-9]+)\}", text))

    assert placeholders == set(props["DefinitionSubstitutions"])
    json.loads(text)  # plain JSON before substitution


def test_every_error_retried_or_caught_is_raised_by_a_step_or_is_a_service_error() -> None:
    _, text = state_machine()
    named = {
        error
        for state in states(json.loads(text))
        for handler in [*state.get("Retry", []), *state.get("Catch", [])]
        for error in handler["ErrorEquals"]
    }

    custom = {error for error in named if not _SERVICE_ERRORS.match(error)}

    assert custom == {"ChunkThrottled"}
    assert all(issubclass(getattr(connect, error), connect.ConnectStepError) for error in custom)


def test_the_tasks_call_the_template_functions_the_substitutions_name() -> None:
    props, _ = state_machine()
    functions = set(template().functions)

    arns = {key: value for key, value in props["DefinitionSubstitutions"].items() if key.endswith("Arn")}

    assert {value["Fn::GetAtt"][0] for value in arns.values()} <= functions
    assert len(arns) == 4
