"""A stack's values as CloudFormation resolves them: ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``,
``Fn::Join``, ``Fn::Split`` and ``Fn::Select`` with its parameters, physical names and ARNs."""

from __future__ import annotations

import re
from typing import Any

from phoneid_dev.access.policies.statements import (
    PolicyError,
    as_tuple,
)
from phoneid_dev.access.recording.facts import StackFacts

_PSEUDO = ("AWS::Region", "AWS::AccountId", "AWS::Partition", "AWS::URLSuffix", "AWS::StackName")


class Resolver:
    """A stack's values: its parameters, physical names and ARNs, as CloudFormation resolves them."""

    def __init__(self, facts: StackFacts) -> None:
        self.facts = facts

    def ref(self, name: str) -> str:
        facts = self.facts
        pseudo = {
            "AWS::Region": facts.region,
            "AWS::AccountId": facts.account,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": facts.name,
        }
        for known in (pseudo, facts.parameters, facts.refs):
            if name in known:
                return str(known[name])
        raise PolicyError(f"Ref {name}: no such parameter or resource in the stack")

    def attribute(self, name: str) -> str:
        if name not in self.facts.attributes:
            raise PolicyError(f"Fn::GetAtt {name}: not in the stack")
        return str(self.facts.attributes[name])

    def resolve(self, value: Any) -> str | list[str]:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float, bool)):
            return str(value).lower() if isinstance(value, bool) else str(value)
        if isinstance(value, list):
            return [item for each in value for item in as_tuple(self.resolve(each))]
        if isinstance(value, dict) and len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                return self.ref(argument)
            if key == "Fn::GetAtt":
                return self.attribute(argument if isinstance(argument, str) else ".".join(argument))
            if key == "Fn::Sub":
                return self._substitute(argument)
            if key == "Fn::Join":
                separator, parts = argument
                return str(separator).join(str(self.resolve(part)) for part in parts)
            if key == "Fn::Split":
                separator, text = argument
                return str(self.resolve(text)).split(str(separator))
            if key == "Fn::Select":
                index, items = argument
                return str(as_tuple(self.resolve(items))[int(str(self.resolve(index)))])
        raise PolicyError(f"cannot resolve {value!r}")

    def _substitute(self, argument: Any) -> str:
        text, variables = (argument, {}) if isinstance(argument, str) else argument
        bound = {name: str(self.resolve(value)) for name, value in variables.items()}

        def replace(found: re.Match[str]) -> str:
            name = found.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in bound:
                return bound[name]
            if "." in name and name not in _PSEUDO:
                return self.attribute(name)
            return self.ref(name)

        return re.sub(r"\$\{([^}]+)\}", replace, str(text))
