"""What one evaluation is about, what the flow itself knows of it, and what a gatherer answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from phoneid.domain.evaluation import identity_observations
from phoneid.domain.identity import Claimed, Identity, MatchResult
from phoneid.domain.policy import Flow, Policy, Signal
from phoneid.domain.session import Possession


@dataclass(frozen=True)
class Subject:
    """What one evaluation is about."""

    flow: Flow
    client_id: str
    phone_number: str | None
    possession: Possession | None = None
    key_mismatch: bool | None = None
    # The identity records: ``identity_checked`` says the flow already looked the number up.
    identity_checked: bool = False
    identity: Identity | None = None
    match: MatchResult | None = None
    claimed: Claimed | None = None
    email: str | None = None
    # Identity attributes that tie checks of different numbers together (customer id, email, ...).
    attributes: tuple[str, ...] = ()
    # False: only what the flow itself knows (possession, the key), no outside source is asked.
    ask_sources: bool = True


class Gatherer(Protocol):
    def gather(self, subject: Subject, policy: Policy) -> dict[Signal, Any]: ...


def flow_observations(subject: Subject) -> dict[Signal, Any]:
    """What the flow itself knows: possession, the device key and the identity match."""
    observed: dict[Signal, Any] = {}
    if subject.possession is not None:
        observed[Signal.POSSESSION] = subject.possession.value
    if subject.key_mismatch is not None:
        observed[Signal.KEY_MISMATCH] = subject.key_mismatch
    if subject.identity_checked and subject.claimed is not None:
        observed |= identity_observations(subject.identity is not None, subject.match)
    return observed
