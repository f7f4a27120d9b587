"""The functions' roles as ``template.yaml`` grants them, and IAM's decision on a request.

A function's ``Policies`` are expanded as SAM expands them: a SAM policy template
(``DynamoDBCrudPolicy: {TableName: ...}``) through samtranslator's own processor and templates, an
inline policy document as written, ``Fn::If`` on the template's ``Conditions`` decided for the
stack's parameters (``AWS::NoValue`` dropping what it stands in). Each statement is then resolved
for one stack (``Ref``, ``Fn::GetAtt``, ``Fn::Sub``, ``Fn::Join``, ``Fn::Select`` with its physical
names and ARNs) and a request is decided as IAM decides within one identity policy: an explicit
``Deny`` that matches wins; else an ``Allow`` that matches allows; else it is denied. Actions match
case-insensitively with ``*`` and ``?``, resources case-sensitively, ``NotAction`` and
``NotResource`` as their complements, and conditions with IAM's operators (``String*``, ``Arn*``,
``Numeric*``, ``Bool``, ``Null``, ``...IfExists``, ``ForAllValues:`` and ``ForAnyValue:``).

Out of scope: resource policies and KMS key policies (the template's keys let the account's IAM
decide), permissions boundaries, session policies, and what SAM adds to a role by itself (CloudWatch
Logs, X-Ray, an SQS event source's polling): those are the runtime's calls, not the code's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from phoneid_dev.access.actions.requests import Request, Value
from phoneid_dev.access.recording import StackFacts
from phoneid_dev.template import Template

REASONS_KEY = "UnexercisedGrants"  # template Metadata: {function: {action: why no test can use it}}
_PSEUDO = ("AWS::Region", "AWS::AccountId", "AWS::Partition", "AWS::URLSuffix", "AWS::StackName")
_NO_VALUE = {"Ref": "AWS::NoValue"}


class PolicyError(Exception):
    """A policy the evaluator cannot read: an intrinsic, operator or policy form it does not know."""


# --- the template's side ---------------------------------------------------------------------------------


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


@cache
def _sam_templates() -> Any:
    # samtranslator takes a second to import: only when a role's policy templates are expanded.
    from samtranslator.policy_template_processor.processor import (  # type: ignore[import-untyped]
        PolicyTemplatesProcessor,
    )

    return PolicyTemplatesProcessor(PolicyTemplatesProcessor.get_default_policy_templates_json())


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, list) else (value,)


class Roles:
    """The template's function roles: statements per stack, conditions, reasons for unused grants."""

    def __init__(self, template: Template) -> None:
        self.document = template.document
        self.functions: dict[str, Mapping[str, Any]] = dict(template.of_type("AWS::Serverless::Function"))
        self._conditions: Mapping[str, Any] = self.document.get("Conditions") or {}
        self._parameters: Mapping[str, Any] = self.document.get("Parameters") or {}

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
        """The function's role for these parameters (SAM's policy templates expanded)."""
        if function not in self.functions:
            raise PolicyError(f"{function} is no function of the template")
        conditions = self.conditions(parameters)
        policies = decide(self.functions[function].get("Policies") or [], conditions)
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
                for at, statement in enumerate(_as_tuple(statements))
            ]
        if len(policy) == 1:
            ((name, values),) = policy.items()
            processor = _sam_templates()
            if processor.has(name):
                document = decide(processor.convert(name, values or {}), conditions)
                return [
                    self._statement(function, f"Policies[{number}] {name}", statement)
                    for statement in _as_tuple(document["Statement"])
                ]
        raise PolicyError(f"{function} Policies[{number}]: not a policy document or SAM policy template")

    @staticmethod
    def _statement(function: str, origin: str, statement: Mapping[str, Any]) -> Statement:
        effect = statement.get("Effect")
        if effect not in ("Allow", "Deny"):
            raise PolicyError(f"{function} {origin}: Effect {effect!r}")

        def listed(name: str) -> tuple[Any, ...] | None:
            return _as_tuple(statement[name]) if name in statement else None

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

    def reasons(self) -> dict[tuple[str, str], str]:
        """(function, action) -> why the suite cannot use that grant (template Metadata)."""
        found: dict[tuple[str, str], str] = {}
        for function, actions in ((self.document.get("Metadata") or {}).get(REASONS_KEY) or {}).items():
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


# --- describing and resolving values ------------------------------------------------------------------------


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
    return json.dumps(value, sort_keys=True)


def describe_condition(condition: Mapping[str, Mapping[str, Any]]) -> str:
    return "; ".join(
        f"{operator} {key} {[describe(v) for v in _as_tuple(values)]}"
        for operator, entries in sorted(condition.items())
        for key, values in sorted(entries.items())
    )


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
            return [item for each in value for item in _as_tuple(self.resolve(each))]
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
            if key == "Fn::Select":
                index, items = argument
                return str(_as_tuple(self.resolve(items))[int(str(self.resolve(index)))])
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


# --- IAM's decision ---------------------------------------------------------------------------------------


def _glob(pattern: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    return _compiled(pattern, ignore_case)


@cache
def _compiled(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(f"^{regex}$", re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL)


def _arn_like(value: str, pattern: str) -> bool:
    """ArnLike/ArnEquals: the six parts of the ARN matched each on its own."""
    values, patterns = value.split(":", 5), pattern.split(":", 5)
    if len(values) != 6 or len(patterns) != 6:
        return False
    return all(_glob(p).match(v) for v, p in zip(values, patterns, strict=True))


def _numeric(value: str) -> float:
    return float(value)


_STRING_TESTS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda v, p: v == p,
    "StringEqualsIgnoreCase": lambda v, p: v.lower() == p.lower(),
    "StringLike": lambda v, p: bool(_glob(p).match(v)),
    "ArnEquals": _arn_like,
    "ArnLike": _arn_like,
    "NumericEquals": lambda v, p: _numeric(v) == _numeric(p),
    "NumericLessThan": lambda v, p: _numeric(v) < _numeric(p),
    "NumericLessThanEquals": lambda v, p: _numeric(v) <= _numeric(p),
    "NumericGreaterThan": lambda v, p: _numeric(v) > _numeric(p),
    "NumericGreaterThanEquals": lambda v, p: _numeric(v) >= _numeric(p),
    "Bool": lambda v, p: v.lower() == p.lower(),
}
_NEGATED = {
    "StringNotEquals": "StringEquals",
    "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase",
    "StringNotLike": "StringLike",
    "ArnNotEquals": "ArnEquals",
    "ArnNotLike": "ArnLike",
    "NumericNotEquals": "NumericEquals",
}


def _context_value(context: Mapping[str, Value], key: str) -> Value | None:
    """Condition keys are case-insensitive."""
    if key in context:
        return context[key]
    lowered = key.lower()
    return next((value for name, value in context.items() if name.lower() == lowered), None)


def condition_holds(operator: str, key: str, expected: Sequence[str], context: Mapping[str, Value]) -> bool:
    """One key of one condition operator, as IAM evaluates it."""
    qualifier, _, base = operator.rpartition(":")
    if_exists = base.endswith("IfExists")
    base = base.removesuffix("IfExists")
    found = _context_value(context, key)
    if base == "Null":
        return (found is None) == (expected[0].lower() == "true")
    negated = base in _NEGATED
    test = _STRING_TESTS.get(_NEGATED.get(base, base))
    if test is None or qualifier not in ("", "ForAllValues", "ForAnyValue"):
        raise PolicyError(f"condition operator {operator} is not supported by the check")
    if found is None:
        return if_exists or qualifier == "ForAllValues"

    def one(value: str) -> bool:
        matched = any(test(value, str(pattern)) for pattern in expected)
        return not matched if negated else matched

    values = found if isinstance(found, tuple) else (found,)
    if qualifier == "ForAllValues":
        return all(one(value) for value in values)
    if qualifier == "ForAnyValue" or not negated:
        return any(one(value) for value in values)
    return all(one(value) for value in values)  # a negated test of a multivalued key: none may match


@dataclass(frozen=True)
class Resolved:
    """A statement resolved for one stack."""

    statement: Statement
    resources: tuple[tuple[str, str], ...]  # (ARN pattern, as the template writes it)
    not_resources: tuple[str, ...]
    condition: tuple[tuple[str, str, tuple[str, ...]], ...]  # (operator, key, values)
    condition_text: str

    @classmethod
    def of(cls, statement: Statement, stack: Resolver) -> Resolved:
        def patterns(values: tuple[Any, ...] | None) -> Iterator[tuple[str, str]]:
            for value in values or ():
                for pattern in _as_tuple(stack.resolve(value)):
                    yield str(pattern), describe(value)

        return cls(
            statement=statement,
            resources=tuple(patterns(statement.resources)),
            not_resources=tuple(pattern for pattern, _ in patterns(statement.not_resources)),
            condition=tuple(
                (operator, key, tuple(str(v) for v in _as_tuple(stack.resolve(values))))
                for operator, entries in statement.condition.items()
                for key, values in entries.items()
            ),
            condition_text=describe_condition(statement.condition),
        )

    def actions_matching(self, action: str) -> list[str]:
        """The statement's action patterns that match ``action`` (NotAction: its negation)."""
        if self.statement.not_actions is not None:
            excluded = any(_glob(p, ignore_case=True).match(action) for p in self.statement.not_actions)
            return [] if excluded else [f"NotAction {list(self.statement.not_actions)}"]
        return [p for p in self.statement.actions or () if _glob(p, ignore_case=True).match(action)]

    def resources_matching(self, resource: str) -> list[str]:
        if self.statement.not_resources is not None:
            excluded = any(_glob(p).match(resource) for p in self.not_resources)
            return [] if excluded else [f"NotResource {list(self.statement.not_resources)}"]
        return [written for pattern, written in self.resources if _glob(pattern).match(resource)]

    def failed_condition(self, context: Mapping[str, Value]) -> str | None:
        """The first condition the request fails, written out with what the request had; None: all hold."""
        for operator, key, values in self.condition:
            if not condition_holds(operator, key, values, context):
                had = _context_value(context, key)
                shown = "absent" if had is None else (list(had) if isinstance(had, tuple) else repr(had))
                return f"{operator} {key} {list(values)} (the request's: {shown})"
        return None


@dataclass(frozen=True)
class Decision:
    allowed: bool
    grants: tuple[Grant, ...] = ()  # the grants that allowed it
    reason: str = ""  # why not


def decide_request(statements: Iterable[Resolved], request: Request) -> Decision:
    """IAM's decision on ``request`` under one identity policy (no resource policy)."""
    allowing: list[Grant] = []
    near: list[str] = []
    action_elsewhere: list[str] = []
    for resolved in statements:
        actions = resolved.actions_matching(request.action)
        if not actions:
            continue
        resources = resolved.resources_matching(request.resource)
        if not resources:
            if resolved.statement.effect == "Allow":
                action_elsewhere += [pattern for pattern, _ in resolved.resources]
            continue
        failed = resolved.failed_condition(request.context)
        if failed is not None:
            if resolved.statement.effect == "Allow":
                near.append(f"{resolved.statement.origin}: condition {failed}")
            continue
        if resolved.statement.effect == "Deny":
            return Decision(False, reason=f"explicitly denied by {resolved.statement.origin}")
        allowing += [
            Grant(resolved.statement.function, action, resource, resolved.condition_text)
            for action in actions
            for resource in resources
        ]
    if allowing:
        return Decision(True, tuple(allowing))
    if near:
        return Decision(False, reason="; ".join(near))
    if action_elsewhere:
        shown = ", ".join(sorted(set(action_elsewhere))[:4])
        return Decision(False, reason=f"{request.action} is allowed only on {shown}")
    return Decision(False, reason=f"no statement allows {request.action}")
