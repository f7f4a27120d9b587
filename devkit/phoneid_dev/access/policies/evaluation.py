"""IAM's decision on a request within one identity policy: a statement resolved for a stack, and
an explicit ``Deny`` that matches winning over an ``Allow``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from phoneid_dev.access.actions.requests import Request, Value
from phoneid_dev.access.policies.conditions import condition_holds, context_value, glob
from phoneid_dev.access.policies.resolver import Resolver
from phoneid_dev.access.policies.statements import (
    Grant,
    Statement,
    as_tuple,
    describe,
    describe_condition,
)


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
                for pattern in as_tuple(stack.resolve(value)):
                    yield str(pattern), describe(value)

        return cls(
            statement=statement,
            resources=tuple(patterns(statement.resources)),
            not_resources=tuple(pattern for pattern, _ in patterns(statement.not_resources)),
            condition=tuple(
                (operator, key, tuple(str(v) for v in as_tuple(stack.resolve(values))))
                for operator, entries in statement.condition.items()
                for key, values in entries.items()
            ),
            condition_text=describe_condition(statement.condition),
        )

    def actions_matching(self, action: str) -> list[str]:
        """The statement's action patterns that match ``action`` (NotAction: its negation)."""
        if self.statement.not_actions is not None:
            excluded = any(glob(p, ignore_case=True).match(action) for p in self.statement.not_actions)
            return [] if excluded else [f"NotAction {list(self.statement.not_actions)}"]
        return [p for p in self.statement.actions or () if glob(p, ignore_case=True).match(action)]

    def resources_matching(self, resource: str) -> list[str]:
        if self.statement.not_resources is not None:
            excluded = any(glob(p).match(resource) for p in self.not_resources)
            return [] if excluded else [f"NotResource {list(self.statement.not_resources)}"]
        return [written for pattern, written in self.resources if glob(pattern).match(resource)]

    def patterns_matching(self, resource: str) -> list[tuple[str, str]]:
        """(resolved pattern, as written) of each of the statement's resources that matches ``resource``."""
        if self.statement.not_resources is not None:
            return [("*", written) for written in self.resources_matching(resource)]
        return [(pattern, written) for pattern, written in self.resources if glob(pattern).match(resource)]

    def failed_condition(self, context: Mapping[str, Value]) -> str | None:
        """The first condition the request fails, written out with what the request had; None: all hold."""
        for operator, key, values in self.condition:
            if not condition_holds(operator, key, values, context):
                had = context_value(context, key)
                shown = "absent" if had is None else (list(had) if isinstance(had, tuple) else repr(had))
                return f"{operator} {key} {list(values)} (the request's: {shown})"
        return None


@dataclass(frozen=True)
class Decision:
    allowed: bool
    grants: tuple[Grant, ...] = ()  # the grants that allowed it
    reason: str = ""  # why not
    # each grant that allowed it, with its resource pattern resolved for the stack and its statement
    matched: tuple[tuple[Grant, str, Resolved], ...] = ()


def decide_request(statements: Iterable[Resolved], request: Request) -> Decision:
    """IAM's decision on ``request`` under one identity policy (no resource policy)."""
    allowing: list[tuple[Grant, str, Resolved]] = []
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
            (Grant(resolved.statement.function, action, written, resolved.condition_text), pattern, resolved)
            for action in actions
            for pattern, written in resolved.patterns_matching(request.resource)
        ]
    if allowing:
        return Decision(True, tuple(grant for grant, _, _ in allowing), matched=tuple(allowing))
    if near:
        return Decision(False, reason="; ".join(near))
    if action_elsewhere:
        shown = ", ".join(sorted(set(action_elsewhere))[:4])
        return Decision(False, reason=f"{request.action} is allowed only on {shown}")
    return Decision(False, reason=f"no statement allows {request.action}")
