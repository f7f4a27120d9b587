"""The Global Fraud Policy evaluation: observations of signals in, pass/fail per category out.

``evaluate(observations, policy)`` is the one evaluation every flow goes through (complete,
unify-status, verify, each Connect row). It reads the policy's rules; it holds no threshold itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from phoneid.domain.identity import Element, MatchResult
from phoneid.domain.policy import Flow, Policy, Signal, parse_policy
from phoneid.domain.reasons import REASONS, Category, describe

__all__ = [
    "REASONS",
    "SOURCE_FAILED",
    "Assurance",
    "Category",
    "Evaluation",
    "Observations",
    "assess",
    "default_policy",
    "describe",
    "evaluate",
    "identity_observations",
]


class _SourceFailed:
    """The observation of a signal whose source failed or timed out."""

    def __repr__(self) -> str:
        return "SOURCE_FAILED"


SOURCE_FAILED: Any = _SourceFailed()

# Signal -> observed value; a signal that is absent was not gathered for this request.
Observations = Mapping[Signal, Any]


@cache
def default_policy() -> Policy:
    """The policy shipped in the layer (``phoneid/policy/default.yaml``), read once per container."""
    from importlib import resources

    import yaml

    text = resources.files("phoneid").joinpath("policy/default.yaml").read_text("utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where the wheel has it: faster
    return parse_policy(yaml.load(text, Loader=loader))  # noqa: S506 - a safe loader


@dataclass(frozen=True)
class Evaluation:
    """Failing reason codes per evaluated category (an empty tuple: the category passed), and codes
    raised by rules that only monitor."""

    results: Mapping[Category, tuple[int, ...]]
    monitored: tuple[int, ...] = ()

    @property
    def passed(self) -> bool:
        return not any(self.results.values())

    def category_passed(self, category: Category) -> bool:
        return not self.results.get(category, ())

    @property
    def codes(self) -> frozenset[int]:
        return frozenset(code for codes in self.results.values() for code in codes)


_ABSENT = object()


def evaluate(observations: Observations, policy: Policy | None = None, flow: Flow = "complete") -> Evaluation:
    """Each active rule of ``flow`` whose signals were all gathered evaluates its category; it raises
    its code when every condition holds, or, when a source failed, if the rule fails closed."""
    policy = policy or default_policy()
    results: dict[Category, list[int]] = {}
    monitored: list[int] = []
    findings = observations.get(Signal.PARTNER_FINDINGS)
    reported = frozenset(findings) if isinstance(findings, frozenset | set | tuple | list) else frozenset()
    observed = observations.get
    for check in policy.flow_checks[flow]:
        if check.accept_findings and check.code in reported:
            raised = True
        else:
            values = [observed(signal, _ABSENT) for signal in check.signals]
            if _ABSENT in values:
                continue
            if SOURCE_FAILED in values:
                raised = check.fail_closed
            else:
                raised = True
                for test, value in zip(check.tests, values, strict=True):
                    if not test(value):
                        raised = False
                        break
        results.setdefault(check.category, [])
        if raised:
            (monitored if check.monitor_only else results[check.category]).append(check.code)
    ordered = {category: tuple(sorted(results[category])) for category in Category if category in results}
    return Evaluation(ordered, tuple(sorted(monitored)))


_ELEMENT_SIGNALS: Mapping[Element, Signal] = {
    Element.SSN: Signal.SSN_MATCH,
    Element.DOB: Signal.DOB_MATCH,
    Element.NAME: Signal.NAME_MATCH,
    Element.ADDRESS: Signal.ADDRESS_MATCH,
}


def identity_observations(found: bool, match: MatchResult | None = None) -> dict[Signal, Any]:
    """What matching the supplied elements against the identity records shows.

    Elements count as confirmed only with the name among them: an SSN and a birth date without the
    name confirm nobody in particular.
    """
    observed: dict[Signal, Any] = {Signal.IDENTITY_FOUND: found}
    if not found:
        return observed
    match = match or MatchResult()
    observed[Signal.IDENTITY_MISMATCHES] = len(match.mismatched)
    observed[Signal.IDENTITY_CONFIRMED_ELEMENTS] = len(match.matched) if Element.NAME in match.matched else 0
    for element, signal in _ELEMENT_SIGNALS.items():
        if element in match.matched:
            observed[signal] = "match"
        elif element in match.mismatched:
            observed[signal] = "mismatch"
    return observed


@dataclass(frozen=True)
class Assurance:
    level: str
    reasons: tuple[str, ...] = field(default_factory=tuple)


def assess(
    evaluation: Evaluation, observations: Observations, *, enrolled_before: bool, policy: Policy
) -> Assurance:
    """The assurance level the policy gives this evaluation: the first level with a reason that holds."""
    raised = evaluation.codes
    agreed = (
        observations.get(Signal.IDENTITY_FOUND) is True and observations.get(Signal.IDENTITY_MISMATCHES) == 0
    )
    confirmed = observations.get(Signal.IDENTITY_CONFIRMED_ELEMENTS, 0) if agreed else 0
    facts = {
        "confirmedElements": confirmed if isinstance(confirmed, int) else 0,
        "secondarySourceConfirms": _positive(observations.get(Signal.KYC_ELEMENTS_SUPPLIED))
        and observations.get(Signal.KYC_ELEMENTS_UNCONFIRMED) == 0,
        "enrolledBefore": enrolled_before,
        "identityFound": observations.get(Signal.IDENTITY_FOUND) is True,
    }
    for level in policy.assurance:
        holding = tuple(
            name
            for name, reason in level.reasons.items()
            if not reason.unconditional and _holds(reason, raised, facts)
        )
        # A reason with no condition is the level's fallback: given only when no other reason holds.
        holding = holding or tuple(name for name, reason in level.reasons.items() if reason.unconditional)
        if holding:
            return Assurance(level.level, holding)
    return Assurance(policy.assurance[-1].level)


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _holds(reason: Any, raised: Iterable[int], facts: Mapping[str, Any]) -> bool:
    if reason.codes:
        return any(code in raised for code in reason.codes)
    if reason.confirmedElements is not None and facts["confirmedElements"] < reason.confirmedElements:
        return False
    for name in ("secondarySourceConfirms", "enrolledBefore", "identityFound"):
        expected = getattr(reason, name)
        if expected is not None and facts[name] != expected:
            return False
    return True
