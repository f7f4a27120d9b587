"""A decision record's facts read back into the observations they were (the inverse of ``facts_of``).

A record keeps each evaluated signal's value as JSON (domain.decisions.facts_of): a failed source as
``{"sourceFailed": true}``, a set as a sorted list, a bounded observation (the carrier's tenure,
known only against the thresholds it was asked about) as its ``repr``. Reading them back gives
observations that ``evaluate`` judges exactly as it judged the live ones; a value that cannot be read
back stays as recorded, and a replay of the live policy shows it (the record is then not reproduced).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

from phoneid.domain.evaluation import SOURCE_FAILED, Observations
from phoneid.domain.policy import Bounds, Flow, Policy, Signal

__all__ = [
    "Compared",
    "FactsKey",
    "bounds_unknown",
    "compared",
    "facts_key",
    "observations_from",
    "observations_of",
]

_SIGNALS: Mapping[str, Signal] = {signal.value: signal for signal in Signal}
_BOUNDS = re.compile(r"Bounds\(\{(.*)\}\)")
_ANSWER = re.compile(r"\s*(-?[0-9.e+-]+|inf)\s*:\s*(True|False)\s*")

# A record's facts as a hashable key: the signal names in the record's order (sorted, as the API
# shows them), and their values. Values that compare equal but evaluate apart are told apart (a bool
# is not the number 1 or 0 here, a failed source is not a mapping), and every value can be read
# back from its key (``observations_from``): a replay memoises its verdicts by this key alone.
FactsKey = tuple[tuple[str, ...], tuple[Any, ...]]


class _Token:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


_TRUE, _FALSE, _FAILED = _Token("true"), _Token("false"), _Token("sourceFailed")
_PLAIN = frozenset({str, int, float, type(None)})
_SIGNAL, _VALUE = itemgetter("signal"), itemgetter("value")


class _Other:
    """A recorded value of no shape ``facts_of`` gives (kept as recorded): its canonical JSON."""

    def __init__(self, value: Any) -> None:
        self.text = json.dumps(value, sort_keys=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Other) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def facts_key(facts: Iterable[Mapping[str, Any]] | Mapping[str, Any]) -> FactsKey:
    """The key of a record's facts, as the API shows them (``[{signal, value, ...}]``) or as the record
    keeps them (signal -> value). It runs once per record: the common values (booleans, numbers,
    strings, null) are taken as they are, in one pass; nothing is parsed."""
    if isinstance(facts, Mapping):
        facts = [{"signal": signal, "value": value} for signal, value in facts.items()]
    else:
        facts = facts if isinstance(facts, list | tuple) else list(facts)
    plain = _PLAIN
    values = [
        _TRUE if v is True else _FALSE if v is False else v if v.__class__ in plain else _keyed(v)
        for v in map(_VALUE, facts)
    ]
    return tuple(map(_SIGNAL, facts)), tuple(values)


def _keyed(value: Any) -> Any:
    if value.__class__ is dict and value == {"sourceFailed": True}:
        return _FAILED
    if value.__class__ is list:  # a tuple is never JSON: in a key, it is a list
        return tuple(v if v.__class__ in _PLAIN else _keyed(v) for v in value)
    if value is True or value is False:
        return _TRUE if value else _FALSE
    return _Other(value)


def observations_from(key: FactsKey) -> dict[Signal, Any]:
    """The observations a key's facts were. A signal this version does not know is left out: no
    policy it loads can test it."""
    signals, values = key
    plain = _PLAIN
    return {
        _SIGNALS[name]: value if value.__class__ in plain and value.__class__ is not str else _observed(value)
        for name, value in zip(signals, values, strict=True)
        if name in _SIGNALS
    }


def observations_of(facts: Iterable[Mapping[str, Any]] | Mapping[str, Any]) -> dict[Signal, Any]:
    """The observations a record's facts were (either form ``facts_key`` reads)."""
    return observations_from(facts_key(facts))


def _observed(value: Any) -> Any:
    if value is _TRUE or value is _FALSE:
        return value is _TRUE
    if value is _FAILED:
        return SOURCE_FAILED
    if value.__class__ is tuple:
        items = [_observed(v) for v in value]
        # A set (partner findings) is kept as a sorted list: read back as the set it was.
        plain = all(isinstance(v, int | str) and not isinstance(v, bool) for v in items)
        return frozenset(items) if plain else tuple(items)
    if value.__class__ is _Other:
        return json.loads(value.text)
    if value.__class__ is str and value.startswith("Bounds("):
        return _bounds(value) or value
    return value


Compared = tuple[tuple[Signal, float], ...]


def compared(policy: Policy, flow: Flow) -> Compared:
    """Each (signal, threshold) that ``policy``'s active rules of ``flow`` compare (worked out once)."""
    return tuple(
        sorted(
            {
                (condition.signal, threshold)
                for rule in policy.active_rules(flow)
                for condition in rule.when
                for threshold in condition.thresholds()
            }
        )
    )


def bounds_unknown(observations: Observations, thresholds: Compared) -> list[str]:
    """The ``thresholds`` (``compared``) a bounded observation was not asked about: a candidate
    tightening the tenure rule to 60 days, the carrier asked about 30 and 90, gives ``tenureDays at
    60``. Judged as they stand they would never raise: a guess, not a replay."""
    unknown: list[str] = []
    for signal, threshold in thresholds:
        value = observations.get(signal)
        if value.__class__ is Bounds and value.at_least(threshold) is None:
            unknown.append(f"{signal.value} at {threshold:g}")
    return unknown


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
