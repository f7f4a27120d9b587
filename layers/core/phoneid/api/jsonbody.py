"""Request bodies read as JSON on our terms: nesting depth bounded (and checked without recursion, so
no body can exhaust the stack), and every field of an object named once (two parsers in a chain, a
WAF and the handler, must never read one body two ways)."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from phoneid.domain.errors import MalformedRequest

MAX_DEPTH = 32  # arrays and objects inside one another; our deepest body (a batch's address) nests 6

# Strings go first (a bracket inside one is text), then everything but the brackets left outside them.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_NAME_SHOWN = 64  # a duplicated field is named in the error, shortened past this


class _Repeated(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deeply arrays and objects nest in ``text`` (``{}`` is 1); counting stops past ``limit``."""
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if depth > limit:
                break
        else:
            depth = max(depth - 1, 0)
    return deepest


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, value in pairs:
        if name in fields:
            raise _Repeated(name)
        fields[name] = value
    return fields


def parse(text: str) -> Any:
    """``text`` as JSON, or a MalformedRequest (8001) saying what is wrong with it."""
    if nesting_depth(text) > MAX_DEPTH:
        raise MalformedRequest(
            f"Malformed request: body nests arrays and objects over {MAX_DEPTH} levels deep"
        )
    try:
        return json.loads(text, object_pairs_hook=_once_each)
    except _Repeated as repeated:
        name = repeated.name if len(repeated.name) <= _NAME_SHOWN else repeated.name[:_NAME_SHOWN] + "..."
        raise MalformedRequest(problems={name or '""': "must appear once"}) from None
    except (ValueError, RecursionError):
        raise MalformedRequest("Malformed request: body is not valid JSON") from None


def _without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    counts = Counter(name for name, _ in pairs)
    return {name: value for name, value in pairs if counts[name] == 1}


def loose_object(text: str) -> dict[str, Any]:
    """The fields of ``text`` when it is a JSON object, to echo ids in an error answer; {} otherwise.

    Never raises (the body may be why the request failed); a field sent twice is left out, as which
    of its values counts is ambiguous.
    """
    try:
        if nesting_depth(text) > MAX_DEPTH:
            return {}
        parsed = json.loads(text, object_pairs_hook=_without_repeats)
    except Exception:  # anything a body does here means "no fields to echo"
        return {}
    return parsed if isinstance(parsed, dict) else {}
