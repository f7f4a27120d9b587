"""IAM's matching: ``*`` and ``?`` patterns, and the condition operators (``String*``, ``Arn*``,
``Numeric*``, ``Bool``, ``Null``, ``...IfExists``, ``ForAllValues:`` and ``ForAnyValue:``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache

from phoneid_dev.access.actions.requests import Value
from phoneid_dev.access.policies.statements import (
    PolicyError,
)


def glob(pattern: str, *, ignore_case: bool = False) -> re.Pattern[str]:
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
    return all(glob(p).match(v) for v, p in zip(values, patterns, strict=True))


def _numeric(value: str) -> float:
    return float(value)


_STRING_TESTS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda v, p: v == p,
    "StringEqualsIgnoreCase": lambda v, p: v.lower() == p.lower(),
    "StringLike": lambda v, p: bool(glob(p).match(v)),
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


def context_value(context: Mapping[str, Value], key: str) -> Value | None:
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
    found = context_value(context, key)
    if base == "Null":
        return (found is None) == (expected[0].lower() == "true")
    negated = base in _NEGATED
    test = _STRING_TESTS.get(_NEGATED.get(base, base))
    if test is None or qualifier not in ("", "ForAllValues", "ForAnyValue"):
        raise PolicyError(f"condition operator {operator} is not supported by the check")
    if found is None:
        # An absent key matches nothing: a negated operator (StringNotEquals, ArnNotLike…) holds, as
        # does …IfExists and ForAllValues (over no values); ForAnyValue and the others do not.
        return if_exists or qualifier == "ForAllValues" or (negated and not qualifier)

    def one(value: str) -> bool:
        matched = any(test(value, str(pattern)) for pattern in expected)
        return not matched if negated else matched

    values = found if isinstance(found, tuple) else (found,)
    if qualifier == "ForAllValues":
        return all(one(value) for value in values)
    if qualifier == "ForAnyValue":
        return any(one(value) for value in values)
    # A multivalued key (dynamodb:Attributes, kms:EncryptionContextKeys) wants ForAllValues or
    # ForAnyValue: without one, no operator, negated or not, holds for it.
    return not isinstance(found, tuple) and one(found)
