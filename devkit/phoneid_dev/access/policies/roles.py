"""The template's function roles: each function's statements for a stack's parameters (SAM's policy
templates expanded), the template's Conditions, and the reasons for grants no test can use."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from phoneid_dev.access.policies.statements import (
    Grant,
    PolicyError,
    Statement,
    as_tuple,
    decide,
    describe,
    describe_condition,
)
from phoneid_dev.template import Template

REASONS_KEY = "UnexercisedGrants"  # template Metadata: {function: {action: why no test can use it}}
WIDE_REASONS_KEY = "WideResources"  # template Metadata: {role: {action: why its resource is wider}}


@cache
def _sam_templates() -> Any:
    # samtranslator takes a second to import: only when a role's policy templates are expanded.
    from samtranslator.policy_template_processor.processor import (  # type: ignore[import-untyped]
        PolicyTemplatesProcessor,
    )

    return PolicyTemplatesProcessor(PolicyTemplatesProcessor.get_default_policy_templates_json())


class Roles:
    """The template's function roles: statements per stack, conditions, reasons for unused grants."""

    def __init__(self, template: Template) -> None:
        self.document = template.document
        self.functions: dict[str, Mapping[str, Any]] = dict(template.of_type("AWS::Serverless::Function"))
        # Every role the template writes: the functions', the state machines' (the same Policies),
        # and each AWS::IAM::Role's policy documents. Calls are recorded for the functions only.
        self.roles: dict[str, Any] = {name: props.get("Policies") for name, props in self.functions.items()}
        for name, props in template.of_type("AWS::Serverless::StateMachine").items():
            self.roles[name] = props.get("Policies")
        for name, props in template.of_type("AWS::IAM::Role").items():
            self.roles[name] = [policy.get("PolicyDocument") for policy in props.get("Policies") or ()]
        self._conditions: Mapping[str, Any] = self.document.get("Conditions") or {}
        self._parameters: Mapping[str, Any] = self.document.get("Parameters") or {}
        self._statements: dict[tuple[str, tuple[tuple[str, bool], ...]], list[Statement]] = {}
        self._read_conditions: dict[str, tuple[str, ...]] = {}

    # --- conditions

    def conditions(self, parameters: Mapping[str, str]) -> dict[str, bool]:
        """Each of the template's Conditions, for these parameter values."""
        decided: dict[str, bool] = {}

        def value(term: Any) -> Any:
            if isinstance(term, dict) and len(term) == 1:
                ((key, argument),) = term.items()
                if key == "Ref" and argument in self._conditions:  # `!Condition X` reads as a Ref
                    return condition(argument)
                if key == "Condition":
                    return condition(argument)
                if key == "Ref":
                    if argument not in parameters:
                        raise PolicyError(f"condition on {argument}, which is no parameter")
                    return parameters[argument]
                if key == "Fn::Equals":
                    left, right = (value(part) for part in argument)
                    return str(left) == str(right)
                if key == "Fn::Not":
                    return not value(argument[0])
                if key == "Fn::And":
                    return all(value(part) for part in argument)
                if key == "Fn::Or":
                    return any(value(part) for part in argument)
                raise PolicyError(f"unsupported function in a condition: {key}")
            return term

        def condition(name: str) -> bool:
            if name not in decided:
                decided[name] = bool(value(self._conditions[name]))
            return decided[name]

        for name in self._conditions:
            condition(name)
        return decided

    def deciding_parameters(self) -> list[str]:
        """The parameters the Conditions read, in the template's order."""
        text = json.dumps(self._conditions)
        return [name for name in self._parameters if f'"{name}"' in text]

    def role_parameters(self) -> list[str]:
        """The stack's tier and region, and the parameters of the conditions the roles depend on."""
        used = set(
            re.findall(
                r'"Fn::If": \["([^"]+)"', json.dumps([f.get("Policies") for f in self.functions.values()])
            )
        )
        pending, seen = list(used), set()
        while pending:  # conditions that read other conditions
            name = pending.pop()
            if name in seen or name not in self._conditions:
                continue
            seen.add(name)
            pending += re.findall(r'"(?:Ref|Condition)": "([^"]+)"', json.dumps(self._conditions[name]))
        text = json.dumps({name: self._conditions[name] for name in seen})
        return [name for name in self._parameters if name in ("Tier", "Region") or f'"{name}"' in text]

    def parameter_choices(self) -> list[dict[str, str]]:
        """Enough parameter sets to reach every branch of every condition: each deciding parameter's
        allowed values, or its default, the values the conditions compare it with and another."""
        text = json.dumps(self._conditions)
        combinations: list[dict[str, str]] = [{}]
        for name in self.deciding_parameters():
            spec = self._parameters[name]
            values = [str(v) for v in spec.get("AllowedValues") or ()]
            if not values:
                compared = re.findall(r'\{"Ref": "' + re.escape(name) + r'"\}, "([^"]*)"', text)
                values = [str(spec.get("Default", "")), *compared, "another-value"]
            values = list(dict.fromkeys(values))
            combinations = [{**chosen, name: value} for chosen in combinations for value in values]
        defaults = {
            name: str(spec["Default"]) for name, spec in self._parameters.items() if "Default" in spec
        }
        return [{**defaults, **chosen} for chosen in combinations]

    # --- statements

    def statements(self, function: str, parameters: Mapping[str, str]) -> list[Statement]:
        """The function's (or another role's) statements for these parameters (SAM's policy
        templates expanded)."""
        if function not in self.roles:
            raise PolicyError(f"{function} is no function of the template")
        conditions = self.conditions(parameters)
        key = self.variant(function, parameters, conditions)
        if key not in self._statements:
            self._statements[key] = self._decided_statements(function, conditions)
        return list(self._statements[key])

    def variant(
        self, function: str, parameters: Mapping[str, str], conditions: Mapping[str, bool] | None = None
    ) -> tuple[str, tuple[tuple[str, bool], ...]]:
        """Which of its forms the role takes for these parameters: the values of the Conditions its
        ``Fn::If`` reads (its statements, unresolved, differ by nothing else)."""
        if function not in self._read_conditions:
            text = json.dumps(self.roles.get(function))
            self._read_conditions[function] = tuple(sorted(set(re.findall(r'"Fn::If": \["([^"]+)"', text))))
        decided = conditions if conditions is not None else self.conditions(parameters)
        return function, tuple((name, decided.get(name, False)) for name in self._read_conditions[function])

    def _decided_statements(self, function: str, conditions: Mapping[str, bool]) -> list[Statement]:
        policies = decide(self.roles[function] or [], conditions)
        found: list[Statement] = []
        for number, policy in enumerate(policies if isinstance(policies, list) else [policies]):
            found += self._policy_statements(function, number, policy, conditions)
        return found

    def _policy_statements(
        self, function: str, number: int, policy: Any, conditions: Mapping[str, bool]
    ) -> list[Statement]:
        if isinstance(policy, str):
            raise PolicyError(f"{function} Policies[{number}]: a managed policy ({policy}) cannot be checked")
        if not isinstance(policy, dict):
            raise PolicyError(f"{function} Policies[{number}]: not a policy: {policy!r}")
        if "Statement" in policy:
            statements, origin = policy["Statement"], f"Policies[{number}].Statement"
            return [
                self._statement(function, f"{origin}[{at}]", statement)
                for at, statement in enumerate(as_tuple(statements))
            ]
        if len(policy) == 1:
            ((name, values),) = policy.items()
            processor = _sam_templates()
            if processor.has(name):
                document = decide(processor.convert(name, values or {}), conditions)
                return [
                    self._statement(function, f"Policies[{number}] {name}", statement)
                    for statement in as_tuple(document["Statement"])
                ]
        raise PolicyError(f"{function} Policies[{number}]: not a policy document or SAM policy template")

    @staticmethod
    def _statement(function: str, origin: str, statement: Mapping[str, Any]) -> Statement:
        effect = statement.get("Effect")
        if effect not in ("Allow", "Deny"):
            raise PolicyError(f"{function} {origin}: Effect {effect!r}")

        def listed(name: str) -> tuple[Any, ...] | None:
            return as_tuple(statement[name]) if name in statement else None

        if (("Action" in statement) == ("NotAction" in statement)) or (
            ("Resource" in statement) == ("NotResource" in statement)
        ):
            raise PolicyError(f"{function} {origin}: one of Action/NotAction and of Resource/NotResource")
        return Statement(
            function=function,
            origin=origin,
            effect=str(effect),
            actions=listed("Action"),
            not_actions=listed("NotAction"),
            resources=listed("Resource"),
            not_resources=listed("NotResource"),
            condition=statement.get("Condition") or {},
        )

    # --- the reasons for grants no test can use

    def reasons(self, key: str = REASONS_KEY) -> dict[tuple[str, str], str]:
        """(function, action) -> why the suite cannot use that grant (template Metadata), or, with
        ``WIDE_REASONS_KEY``, why its resource is wider than one of the stack's own."""
        found: dict[tuple[str, str], str] = {}
        for function, actions in ((self.document.get("Metadata") or {}).get(key) or {}).items():
            for action, reason in (actions or {}).items():
                found[(str(function), str(action))] = str(reason).strip()
        return found

    def grants(self, function: str, parameters: Mapping[str, str]) -> set[Grant]:
        """What the function's role allows for these parameters, as the template writes it."""
        grants = set()
        for statement in self.statements(function, parameters):
            if statement.effect != "Allow":
                continue
            condition = describe_condition(statement.condition)
            for action in statement.actions or (f"NotAction {list(statement.not_actions or ())}",):
                resources = statement.resources or (f"NotResource {list(statement.not_resources or ())}",)
                for resource in resources:
                    grants.add(Grant(function, str(action), describe(resource), condition))
        return grants
