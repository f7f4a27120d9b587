"""A role's statements as the template writes them: ``Fn::If`` decided, grants named, values
described with their intrinsics as ``${Name}``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_NO_VALUE = {"Ref": "AWS::NoValue"}


class PolicyError(Exception):
    """A policy the evaluator cannot read: an intrinsic, operator or policy form it does not know."""


@dataclass(frozen=True)
class Statement:
    """One statement of a function's role, ``Fn::If`` decided, its values not yet resolved."""

    function: str
    origin: (
        str  # where in the function's Policies: "Policies[2] DynamoDBCrudPolicy", "Policies[4].Statement[1]"
    )
    effect: str
    actions: tuple[str, ...] | None
    not_actions: tuple[str, ...] | None
    resources: tuple[Any, ...] | None
    not_resources: tuple[Any, ...] | None
    condition: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Grant:
    """One action on one resource that a function's role allows, as the template writes them."""

    function: str
    action: str
    resource: str
    condition: str = ""

    @property
    def shown_resource(self) -> str:
        """The resource without the prefix every ARN of the stack's own account and region has."""
        return re.sub(
            r"^arn:\$\{AWS::Partition\}:[a-z0-9-]+:\$\{AWS::Region\}:\$\{AWS::AccountId\}:", "", self.resource
        )

    def __str__(self) -> str:
        when = f" when {self.condition}" if self.condition else ""
        return f"{self.function}  {self.action}  {self.shown_resource}{when}"


def as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, list) else (value,)


def decide(value: Any, conditions: Mapping[str, bool]) -> Any:
    """``value`` with every ``Fn::If`` replaced by its branch; ``AWS::NoValue`` removes its entry."""
    if isinstance(value, dict):
        if len(value) == 1 and "Fn::If" in value:
            name, when_true, when_false = value["Fn::If"]
            if name not in conditions:
                raise PolicyError(f"Fn::If on {name}, which is no condition of the template")
            return decide(when_true if conditions[name] else when_false, conditions)
        decided = {key: decide(item, conditions) for key, item in value.items()}
        return {key: item for key, item in decided.items() if item != _NO_VALUE}
    if isinstance(value, list):
        return [item for item in (decide(each, conditions) for each in value) if item != _NO_VALUE]
    return value


def describe(value: Any) -> str:
    """A value as the template writes it, intrinsics as ``${Name}``: how a grant is named."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((key, argument),) = value.items()
        if key == "Ref":
            return f"${{{argument}}}"
        if key == "Fn::GetAtt":
            return "${" + (argument if isinstance(argument, str) else ".".join(argument)) + "}"
        if key == "Fn::Sub":
            text, variables = (argument, {}) if isinstance(argument, str) else argument
            for name, bound in variables.items():
                text = text.replace(f"${{{name}}}", describe(bound))
            return str(text)
        if key == "Fn::Join":
            separator, parts = argument
            return str(separator).join(describe(part) for part in parts)
        if key == "Fn::Split":
            separator, text = argument
            return f"{describe(text)}.split({separator})"
        if key == "Fn::Select":
            index, items = argument
            return f"{describe(items)}[{index}]"
    return json.dumps(value, sort_keys=True)


def describe_condition(condition: Mapping[str, Mapping[str, Any]]) -> str:
    return "; ".join(
        f"{operator} {key} {[describe(v) for v in as_tuple(values)]}"
        for operator, entries in sorted(condition.items())
        for key, values in sorted(entries.items())
    )
