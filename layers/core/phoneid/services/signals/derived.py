"""Signals computed from others: how many sources disagree with the claim; whether anything at all is
known of the number. Production and Sandbox derive them the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from phoneid.domain.evaluation import SOURCE_FAILED
from phoneid.domain.policy import Signal

# Signals computed from others, and the others they need.
DERIVED_FROM: Mapping[Signal, frozenset[Signal]] = {
    Signal.SOURCES_WITH_MISMATCH: frozenset({Signal.IDENTITY_MISMATCHES, Signal.SECONDARY_SOURCE_MISMATCHES}),
    Signal.ANY_INFORMATION: frozenset({Signal.ACTIVE_IDENTITY, Signal.PRIOR_ACTIVITY}),
}


def with_inputs(needed: frozenset[Signal]) -> frozenset[Signal]:
    """The signals to observe for ``needed``: those, and the inputs of those derived from others."""
    return needed.union(*(DERIVED_FROM[signal] for signal in needed if signal in DERIVED_FROM))


def derived(observed: Mapping[Signal, Any], needed: frozenset[Signal]) -> dict[Signal, Any]:
    """Signals computed from others: how many sources disagree with the claim; whether anything at all
    is known of the number (an identity tied to it, or earlier checks)."""
    found: dict[Signal, Any] = {}
    if Signal.ANY_INFORMATION in needed and Signal.ANY_INFORMATION not in observed:
        active, prior = observed.get(Signal.ACTIVE_IDENTITY), observed.get(Signal.PRIOR_ACTIVITY)
        if active is True or (isinstance(prior, int) and prior > 0):
            found[Signal.ANY_INFORMATION] = True
        elif active is SOURCE_FAILED or prior is SOURCE_FAILED:
            found[Signal.ANY_INFORMATION] = SOURCE_FAILED
        elif active is False and prior == 0:
            found[Signal.ANY_INFORMATION] = False
    if Signal.SOURCES_WITH_MISMATCH in needed and Signal.SOURCES_WITH_MISMATCH not in observed:
        parts = [observed.get(Signal.IDENTITY_MISMATCHES), observed.get(Signal.SECONDARY_SOURCE_MISMATCHES)]
        if any(part is SOURCE_FAILED for part in parts):
            found[Signal.SOURCES_WITH_MISMATCH] = SOURCE_FAILED
        elif any(isinstance(part, int) for part in parts):
            found[Signal.SOURCES_WITH_MISMATCH] = sum(
                1 for part in parts if isinstance(part, int) and part > 0
            )
    return found
