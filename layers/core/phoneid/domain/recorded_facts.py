"""A decision record's facts read back into the observations they were (the inverse of ``facts_of``).

A record keeps each evaluated signal's value as JSON (domain.decisions.facts_of): a failed source as
``{"sourceFailed": true}``, a set as a sorted list, a bounded observation (the carrier's tenure,
known only against the thresholds it was asked about) as its ``repr``. Reading them back gives
observations that ``evaluate`` judges exactly as it judged the live ones; a value that cannot be read
back stays as recorded, and a replay of the live policy shows it (the record is then not reproduced).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from phoneid.domain.evaluation import SOURCE_FAILED, Observations
from phoneid.domain.policy import Bounds, Flow, Policy, Signal

__all__ = ["FactsKey", "bounds_unknown", "facts_key", "observations_of", "recorded_value"]

_SIGNALS: Mapping[str, Signal] = {signal.value: signal for signal in Signal}
_BOUNDS = re.compile(r"Bounds\(\{(.*)\}\)")
_ANSWER = re.compile(r"\s*(-?[0-9.e+-]+|inf)\s*:\s*(True|False)\s*")

# A record's facts as a hashable key: signal names and values, in the record's order (sorted by
# signal, as the API shows them). Values that compare equal but evaluate apart are told apart: a
# bool is not the number 1 or 0 here, a failed source is not a mapping.
FactsKey = tuple[Any, ...]


class _Token:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


_TRUE, _FALSE, _FAILED = _Token("true"), _Token("false"), _Token("sourceFailed")


def facts_key(facts: Iterable[Mapping[str, Any]]) -> FactsKey:
    """The key of a record's facts (``[{signal, value, ...}]``), for memoising their evaluation.
    It runs once per record: a plain loop, no parsing of the values."""
    key: list[Any] = []
    append = key.append
    for fact in facts:
        value = fact["value"]
        kind = value.__class__
        if kind is bool:
            value = _TRUE if value else _FALSE
        elif kind is list:
            value = tuple(_TRUE if v is True else _FALSE if v is False else v for v in value)
        elif kind is dict:
            value = _FAILED if value.get("sourceFailed") is True else tuple(sorted(value.items(), key=repr))
        append(fact["signal"])
        append(value)
    return tuple(key)


def recorded_value(value: Any) -> Any:
    """One recorded value as the observation it was."""
    if isinstance(value, dict):
        return SOURCE_FAILED if value.get("sourceFailed") is True else value
    if isinstance(value, list):
        return frozenset(value) if all(isinstance(v, int | str) for v in value) else tuple(value)
    if isinstance(value, str) and value.startswith("Bounds("):
        return _bounds(value) or value
    return value


def observations_of(facts: Iterable[Mapping[str, Any]] | Mapping[str, Any]) -> dict[Signal, Any]:
    """The observations of a record's facts, as the API shows them (``[{signal, value, ...}]``) or as
    the record keeps them (signal -> value). A signal this version does not know is left out: no
    policy it loads can test it."""
    pairs = facts.items() if isinstance(facts, Mapping) else ((f["signal"], f["value"]) for f in facts)
    return {_SIGNALS[name]: recorded_value(value) for name, value in pairs if name in _SIGNALS}


def bounds_unknown(observations: Observations, policy: Policy, flow: Flow) -> list[str]:
    """Thresholds ``policy``'s rules of ``flow`` compare a bounded observation with that it was not
    asked about (a candidate tightening the tenure rule to 60 days, the carrier asked about 30 and
    90): ``tenureDays at 60``. Judged as they stand they would never raise: a guess, not a replay."""
    unknown: list[str] = []
    for rule in policy.active_rules(flow):
        for condition in rule.when:
            value = observations.get(condition.signal)
            if not isinstance(value, Bounds):
                continue
            for threshold in condition.thresholds():
                if value.at_least(threshold) is None:
                    unknown.append(f"{condition.signal.value} at {threshold:g}")
    return sorted(set(unknown))


def _bounds(text: str) -> Bounds | None:
    """``Bounds({30.0: True, 90.0: False})`` (its repr, as ``facts_of`` keeps it) read back."""
    found = _BOUNDS.fullmatch(text)
    if found is None:
        return None
    answers: dict[float, bool] = {}
    body = found.group(1)
    for entry in body.split(",") if body.strip() else ():
        answer = _ANSWER.fullmatch(entry)
        if answer is None:
            return None
        try:
            answers[float(answer.group(1))] = answer.group(2) == "True"
        except ValueError:
            return None
    return Bounds(answers)
