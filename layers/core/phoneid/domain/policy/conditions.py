"""A rule's conditions: one signal and its tests, and the bounded observations they compare with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from pydantic import Field, model_validator

from phoneid.domain.policy.signals import Signal
from phoneid.domain.policy.strict import Strict

Scalar = bool | int | float | str


class Condition(Strict):
    """One signal and its tests; all tests must hold."""

    signal: Signal
    is_: Scalar | None = Field(default=None, alias="is")
    in_: tuple[Scalar, ...] | None = Field(default=None, alias="in", min_length=1)
    below: float | None = None
    atLeast: float | None = None

    @model_validator(mode="after")
    def _has_a_test(self) -> Condition:
        if self.is_ is None and self.in_ is None and self.below is None and self.atLeast is None:
            raise ValueError("a condition needs at least one test: is, in, below or atLeast")
        return self

    def holds(self, value: Any) -> bool:
        """Whether ``value`` (an observation of the signal) passes every test."""
        if self.is_ is not None and not _equal(value, self.is_):
            return False
        if self.in_ is not None and not any(_equal(value, option) for option in self.in_):
            return False
        if self.below is not None and not _compare(value, "below", self.below):
            return False
        return self.atLeast is None or _compare(value, "atLeast", self.atLeast)

    @cached_property
    def test(self) -> Callable[[Any], bool]:
        """``holds`` as one function, specialised for the common single tests (it runs per rule per
        verification)."""
        if self.in_ is None and self.below is None and self.atLeast is None and self.is_ is not None:
            expected = self.is_
            if isinstance(expected, bool):
                return lambda value: value is expected
            return lambda value: not isinstance(value, bool) and bool(value == expected)
        return self.holds

    def thresholds(self) -> tuple[float, ...]:
        return tuple(t for t in (self.below, self.atLeast) if t is not None)

    def describe(self) -> str:
        """``simSwapHoursAgo < 24``, as the docs show a condition."""
        tests = []
        if self.is_ is not None:
            tests.append(f"= {_show(self.is_)}")
        if self.in_ is not None:
            tests.append("in " + ", ".join(_show(v) for v in self.in_))
        if self.atLeast is not None:
            tests.append(f">= {_show(self.atLeast)}")
        if self.below is not None:
            tests.append(f"< {_show(self.below)}")
        return f"`{self.signal.value}` " + " and ".join(tests)


def _show(value: Scalar) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _equal(value: Any, expected: Scalar) -> bool:
    # bool is an int in Python: True must not equal 1.
    if isinstance(value, bool) or isinstance(expected, bool):
        return isinstance(value, bool) and isinstance(expected, bool) and value is expected
    return bool(value == expected)


def _compare(value: Any, test: str, threshold: float) -> bool:
    """Numbers compare as numbers; a bounded observation (known only against some thresholds, like
    a carrier's tenure check) answers for the thresholds it was asked about."""
    if isinstance(value, Bounds):
        answer = value.at_least(threshold)
        if answer is None:
            return False
        return answer if test == "atLeast" else not answer
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value >= threshold if test == "atLeast" else value < threshold


class Bounds:
    """A quantity known only as "at least T" or "less than T" for some thresholds T."""

    def __init__(self, at_least: Mapping[float, bool]) -> None:
        self._at_least = dict(at_least)

    def at_least(self, threshold: float) -> bool | None:
        return self._at_least.get(threshold)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bounds) and other._at_least == self._at_least

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._at_least.items())))

    def __repr__(self) -> str:
        return f"Bounds({self._at_least!r})"
