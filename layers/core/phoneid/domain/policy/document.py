"""A policy document: its windows, its sources' timeouts, its rules and assurance levels, what each
flow asks of it (worked out once), and its validation on load."""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from phoneid.domain.policy.assurance import Level
from phoneid.domain.policy.rules import ALL_FLOWS, Action, Flow, OnSourceFailure, Rule, RuleCheck
from phoneid.domain.policy.signals import Signal
from phoneid.domain.policy.strict import Strict


class Windows(Strict):
    recentActivityHours: Annotated[int, Field(ge=1, le=24 * 90)] = 24
    shortTenureDays: Annotated[int, Field(ge=1, le=3650)] = 90
    numberChangeDays: Annotated[int, Field(ge=1, le=3650)] = 30
    historyDays: Annotated[int, Field(ge=1, le=3650)] = 365


SourceName = Literal["carrier", "lists", "records"]


class Sources(Strict):
    deadlineMs: Annotated[int, Field(ge=100, le=20_000)] = 4000
    timeoutsMs: dict[SourceName, Annotated[int, Field(ge=50, le=20_000)]] = Field(default_factory=dict)

    def timeout_seconds(self, source: SourceName) -> float:
        return min(self.timeoutsMs.get(source, self.deadlineMs), self.deadlineMs) / 1000


class Policy(Strict):
    version: Annotated[str, Field(min_length=1, max_length=64)]
    windows: Windows = Windows()
    sources: Sources = Sources()
    rules: tuple[Rule, ...]
    assurance: tuple[Level, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _each_code_once(self) -> Policy:
        seen: set[int] = set()
        for rule in self.rules:
            if rule.code in seen:
                raise ValueError(f"code {rule.code} has more than one rule")
            seen.add(rule.code)
        return self

    # What every verification asks of the policy is worked out once per policy (a Connect file asks
    # it 800,000 times). A policy is never changed in place, so these never go stale.

    @cached_property
    def flow_rules(self) -> Mapping[Flow, tuple[Rule, ...]]:
        return {
            flow: tuple(rule for rule in self.rules if rule.action != Action.OFF and flow in rule.flows)
            for flow in ALL_FLOWS
        }

    @cached_property
    def flow_checks(self) -> Mapping[Flow, tuple[RuleCheck, ...]]:
        """Each flow's active rules as plain tuples, in order, for ``evaluate``."""
        return {
            flow: tuple(
                RuleCheck(
                    code=rule.code,
                    category=rule.category,
                    monitor_only=rule.action != Action.FAIL,
                    accept_findings=rule.acceptFindings,
                    fail_closed=rule.onSourceFailure == OnSourceFailure.FAIL,
                    signals=tuple(condition.signal for condition in rule.when),
                    tests=tuple(condition.test for condition in rule.when),
                )
                for rule in rules
            )
            for flow, rules in self.flow_rules.items()
        }

    @cached_property
    def flow_signals(self) -> Mapping[Flow, frozenset[Signal]]:
        needed = {}
        for flow, rules in self.flow_rules.items():
            findings = {Signal.PARTNER_FINDINGS} if any(rule.acceptFindings for rule in rules) else set()
            needed[flow] = frozenset(signal for rule in rules for signal in rule.signals).union(findings)
        return needed

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 of the document's canonical JSON, hex: the same rules, the same hash (each
        decision record names its policy by it; worked out once, not per record)."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    @cached_property
    def signal_thresholds(self) -> Mapping[Signal, tuple[float, ...]]:
        found: dict[Signal, set[float]] = {}
        for rule in self.rules:
            if rule.action == Action.OFF:
                continue
            for condition in rule.when:
                found.setdefault(condition.signal, set()).update(condition.thresholds())
        return {signal: tuple(sorted(thresholds)) for signal, thresholds in found.items()}

    def active_rules(self, flow: Flow) -> tuple[Rule, ...]:
        return self.flow_rules[flow]

    def needed_signals(self, flow: Flow) -> frozenset[Signal]:
        """The signals some active rule of ``flow`` tests: only their sources are asked."""
        return self.flow_signals[flow]

    def thresholds(self, signal: Signal) -> tuple[float, ...]:
        """Every threshold the rules compare ``signal`` with (a carrier's tenure check needs them)."""
        return self.signal_thresholds.get(signal, ())


class InvalidPolicy(ValueError):
    """A policy document that cannot be used; the message names each bad entry."""


def _entry(location: tuple[Any, ...], document: Any) -> str:
    """``rules[12] (code 9135).when[0].below`` for a pydantic error location."""
    parts: list[str] = []
    node = document
    for part in location:
        if isinstance(part, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{part}]"]
            node = node[part] if isinstance(node, list) and part < len(node) else None
            if isinstance(node, dict) and "code" in node and len(parts) == 1:
                parts[-1] += f" (code {node['code']})"
        else:
            parts.append(str(part))
            node = node.get(part) if isinstance(node, dict) else None
    return ".".join(parts) or "policy"


def _problem(error: Any, document: Any) -> str:
    entry = _entry(tuple(error["loc"]), document)
    if error["type"] == "enum" and error["loc"][-1] == "signal":
        # Listing all the signals hides the typo: name it and the few closest instead.
        given = str(error["input"])
        closest = difflib.get_close_matches(given, [signal.value for signal in Signal], n=3)
        hint = f"; closest: {', '.join(closest)}" if closest else "; docs/fraud-policy.md lists the signals"
        return f"{entry}: unknown signal {given!r}{hint}"
    return f"{entry}: {str(error['msg']).removeprefix('Value error, ')}"


def _follow_ons(locations: list[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
    """Errors of an entry one of whose parts is already wrong (a ``when`` left empty by its one bad
    condition): they say nothing the part's own error does not."""
    return {loc for loc in locations if any(other[: len(loc)] == loc and other != loc for other in locations)}


def parse_policy(document: Any) -> Policy:
    """A validated policy from a parsed document (a mapping); raises ``InvalidPolicy`` naming entries."""
    if not isinstance(document, dict):
        raise InvalidPolicy("a policy must be a mapping with version, rules and assurance")
    try:
        return Policy.model_validate(document)
    except ValidationError as error:
        errors = error.errors()
        follow_ons = _follow_ons([tuple(e["loc"]) for e in errors])
        problems = [_problem(e, document) for e in errors if tuple(e["loc"]) not in follow_ons]
        raise InvalidPolicy("invalid policy: " + "; ".join(problems)) from None
