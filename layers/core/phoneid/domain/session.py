"""The possession-flow session: what one correlationId has done and what it expects next."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Literal

from phoneid.domain.flow import Step

SESSION_LIFETIME = timedelta(minutes=15)

FlowType = Literal["desktop", "mobile"]


class Possession(StrEnum):
    PENDING = "pending"
    PASSED = "passed"
    FAILED = "failed"


@dataclass(frozen=True)
class Challenge:
    """Challenge data (PII): SSN as 4 or 9 digits and date of birth as sent. Stored encrypted."""

    ssn: str | None = None
    dob: str | None = None

    @property
    def missing(self) -> bool:
        return self.ssn is None and self.dob is None


@dataclass(frozen=True)
class Session:
    client_id: str
    correlation_id: str
    flow_type: FlowType
    created_at: datetime
    next_step: Step
    answered: frozenset[Step] = frozenset({Step.START})
    phone_number: str | None = None
    possession: Possession = Possession.PENDING
    challenge: Challenge = field(default_factory=Challenge)
    allow_otp_retry: bool = False
    final_target_url: str | None = None
    sandbox_scenario: str | None = None

    @property
    def expires_at(self) -> datetime:
        return self.created_at + SESSION_LIFETIME

    def expired(self, now: datetime) -> bool:
        return now >= self.expires_at


@dataclass(frozen=True)
class Transition:
    """One step's effect on a session, written with a single conditional write.

    The write succeeds only when the session still expects ``called`` and has not expired, so two
    concurrent calls of one step cannot both win.
    """

    called: Step
    next_step: Step
    possession: Possession | None = None
    challenge: Challenge | None = None


class TransitionRejected(Exception):
    """The conditional write of a transition failed: the session moved on, expired or never existed."""
