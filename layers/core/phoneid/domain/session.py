"""The possession-flow session: what one correlationId has done and what it expects next."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import cached_property
from typing import Literal

from phoneid.domain.flow import Step
from phoneid.domain.possession import PossessionState
from phoneid.domain.possession import Status as Possession

__all__ = [
    "SESSION_LIFETIME",
    "Challenge",
    "FlowType",
    "Possession",
    "SealedChallenge",
    "Session",
    "Socket",
    "TransitionRejected",
]

SESSION_LIFETIME = timedelta(minutes=15)

FlowType = Literal["desktop", "mobile"]


@dataclass(frozen=True)
class Challenge:
    """Challenge data (PII): SSN as 4 or 9 digits and date of birth as sent. Stored encrypted."""

    ssn: str | None = None
    dob: str | None = None

    @property
    def missing(self) -> bool:
        return self.ssn is None and self.dob is None


class SealedChallenge(Challenge):
    """Challenge data as stored: opened (a key-service Decrypt) only when a step reads it, so the
    many reads that never look at it (validate, the client API) cost no decryption."""

    def __init__(self, opener: Callable[[], Challenge]) -> None:
        object.__setattr__(self, "_opener", opener)

    @cached_property
    def _opened(self) -> Challenge:
        return self._opener()  # type: ignore[attr-defined, no-any-return]

    @property
    def ssn(self) -> str | None:
        return self._opened.ssn

    @property
    def dob(self) -> str | None:
        return self._opened.dob

    @property
    def missing(self) -> bool:
        return False  # sealed only when there was something to seal

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, Challenge) and (self.ssn, self.dob) == (other.ssn, other.dob)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "SealedChallenge(...)"  # never opened (nor printed) for a log line


@dataclass(frozen=True)
class Socket:
    """The desktop client's WebSocket, waiting for the Instant Link selection."""

    endpoint: str
    connection_id: str


@dataclass(frozen=True)
class Unify:
    """What a unified authentication asked for, and what the device's keys have done in it."""

    possession_type: Literal["mobile", "none"]
    nonce: str  # the fresh value devices sign to prove they hold a key
    rebind: bool = False
    check_reputation: bool = False
    requested_device_id: str | None = None  # picks a registration when a browser holds several
    client_customer_id: str | None = None
    proven_device_id: str | None = None  # a key proof that stands in for possession
    rebind_device_id: str | None = None  # the device's key to move to this number after possession
    registered_device_id: str | None = None  # a new key, bound when the flow succeeds
    registered_jwk: tuple[tuple[str, str], ...] | None = None
    key_mismatch: bool = False  # 9101: the key belongs to another number and rebind was not set
    key_revoked: bool = False  # 8019


@dataclass(frozen=True)
class Session:
    client_id: str
    correlation_id: str
    flow_type: FlowType
    created_at: datetime
    next_step: Step
    answered: frozenset[Step] = frozenset({Step.START})
    phone_number: str | None = None
    possession: PossessionState = field(default_factory=PossessionState)
    challenge: Challenge = field(default_factory=Challenge)
    allow_otp_retry: bool = False
    final_target_url: str | None = None
    sandbox_scenario: str | None = None
    sms_message: str | None = None  # the integrator's SMS text with a {code} slot
    otp_length: int = 6
    socket: Socket | None = None
    unify: Unify | None = None  # None: the staged flow
    # Bumped by every write; each write is conditional on the version it read.
    version: int = 0

    @property
    def expires_at(self) -> datetime:
        return self.created_at + SESSION_LIFETIME

    def expired(self, now: datetime) -> bool:
        return now >= self.expires_at

    def answer(self, called: Step, following: Step) -> Session:
        """The session after ``called`` was answered with a 200 and ``following`` comes next."""
        return replace(self, next_step=following, answered=self.answered | {called})


class TransitionRejected(Exception):
    """The conditional write failed: the session changed since it was read, expired, or never existed."""
