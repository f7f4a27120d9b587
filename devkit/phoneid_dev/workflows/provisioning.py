"""The template's state machines and their EventBridge rules, created in moto for a local stack."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack

from phoneid_dev.workflows.execution import install


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
