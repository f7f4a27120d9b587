"""A policy's rules: from signals to a reason code, what failing it does, and the flows it applies to."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal, NamedTuple

from pydantic import Field, model_validator

from phoneid.domain.policy.conditions import Condition
from phoneid.domain.policy.signals import Signal
from phoneid.domain.policy.strict import Strict
from phoneid.domain.reasons import REASONS, Category


class Action(StrEnum):
    FAIL = "fail"  # the rule's category fails
    MONITOR = "monitor"  # logged and counted only
    OFF = "off"  # not evaluated; its sources are not asked


class OnSourceFailure(StrEnum):
    SKIP = "skip"  # a failed source raises nothing (fail open)
    FAIL = "fail"  # a failed source raises the code (fail closed)


Flow = Literal["complete", "unify", "verify"]
ALL_FLOWS: tuple[Flow, ...] = ("complete", "unify", "verify")


class Rule(Strict):
    code: int
    category: Category
    when: tuple[Condition, ...] = Field(min_length=1)
    action: Action = Action.FAIL
    onSourceFailure: OnSourceFailure = OnSourceFailure.SKIP
    # The flows the rule applies to: complete (staged flow), unify (unify-status/bind) and verify
    # (/v3/verify, its batch and Connect rows).
    flows: tuple[Flow, ...] = Field(default=ALL_FLOWS, min_length=1)
    # Also raised when a data partner reported this code for the number (``reputationReasons`` of
    # the identity records), whatever the conditions say.
    acceptFindings: bool = True

    @model_validator(mode="after")
    def _known_code(self) -> Rule:
        if self.code not in REASONS:
            raise ValueError(f"{self.code} is not a reason code of the evaluation")
        expected = REASONS[self.code][0]
        if self.category != expected:
            raise ValueError(f"code {self.code} belongs to {expected.value}, not {self.category.value}")
        return self

    @cached_property
    def signals(self) -> frozenset[Signal]:
        return frozenset(condition.signal for condition in self.when)


class RuleCheck(NamedTuple):
    """A rule as ``evaluate`` runs it."""

    code: int
    category: Category
    monitor_only: bool
    accept_findings: bool
    fail_closed: bool
    signals: tuple[Signal, ...]
    tests: tuple[Callable[[Any], bool], ...]
