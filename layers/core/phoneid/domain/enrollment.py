"""Identity Manager enrollments: one identity (a phone number, optionally a customer) per client.

States and transitions (our choice, in ``docs/identity-manager.md#states-and-transitions``):

| State | activate | deactivate | disenroll |
|---|---|---|---|
| active | active | inactive | disenrolled |
| inactive | active | inactive | disenrolled |
| disenrolled | not found | not found | not found |

An active identity is monitored for changes (webhooks); an inactive one is kept but not monitored.
Disenrolling deletes the identity's PII at once and leaves a tombstone without it, which expires
after ``TOMBSTONE_LIFETIME``; for the API a disenrolled identity no longer exists.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from phoneid.domain.errors import IdentityNotFound
from phoneid.domain.signals import NumberHistory

TOMBSTONE_LIFETIME = timedelta(days=30)
MAX_ATTRIBUTES = 10
# A client's identities of one number that lookup and the number's history find the moment they are
# enrolled (a roster beside the index, which may lag); beyond it, new ones only once the index has
# caught up (docs/adr/0099-reads-of-a-number-see-its-enrollments-at-once.md).
ROSTER_LIMIT = 100


class Status(StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    DISENROLLED = "disenrolled"


class Action(StrEnum):
    ACTIVATE = "activate"
    DEACTIVATE = "deactivate"
    DISENROLL = "disenroll"


TRANSITIONS: dict[tuple[Status, Action], Status] = {
    (Status.ACTIVE, Action.ACTIVATE): Status.ACTIVE,
    (Status.ACTIVE, Action.DEACTIVATE): Status.INACTIVE,
    (Status.ACTIVE, Action.DISENROLL): Status.DISENROLLED,
    (Status.INACTIVE, Action.ACTIVATE): Status.ACTIVE,
    (Status.INACTIVE, Action.DEACTIVATE): Status.INACTIVE,
    (Status.INACTIVE, Action.DISENROLL): Status.DISENROLLED,
}


def next_status(current: Status, action: Action) -> Status:
    """The state ``action`` leads to; a disenrolled identity is not found (8011)."""
    try:
        return TRANSITIONS[(current, action)]
    except KeyError:
        raise IdentityNotFound() from None


def new_service_id() -> str:
    """A random identifier: it says nothing about the number, the customer or the client."""
    return str(uuid.uuid4())


def is_service_id(text: str) -> bool:
    """Whether ``text`` has the form of an identifier this service issues (a canonical UUID)."""
    try:
        return str(uuid.UUID(text)) == text
    except ValueError:
        return False


@dataclass(frozen=True)
class IdentityAttribute:
    attribute_type: str
    attribute_value: str


@dataclass(frozen=True)
class Pii:
    """What is encrypted at rest and deleted on disenroll."""

    first_name: str | None = None
    last_name: str | None = None
    client_human_id: str | None = None
    device_id: str | None = None
    attributes: tuple[IdentityAttribute, ...] = ()

    @property
    def empty(self) -> bool:
        return self == Pii()


@dataclass(frozen=True)
class Enrollment:
    client_id: str
    service_id: str
    phone_number: str  # E.164; in clear, it is the lookup key
    country: str  # ISO 3166 alpha-2
    created_at: datetime
    status: Status = Status.ACTIVE
    client_customer_id: str | None = None
    pii: Pii | None = Pii()  # None: not read (listings do not decrypt it)
    updated_at: datetime | None = None
    expires_at: datetime | None = None  # tombstones only

    @property
    def active(self) -> bool:
        return self.status == Status.ACTIVE

    @property
    def exists(self) -> bool:
        """Whether the API still knows this identity (a tombstone does not exist for it)."""
        return self.status != Status.DISENROLLED

    def apply(self, action: Action, now: datetime) -> Enrollment:
        """The enrollment after ``action``; disenrolling drops every piece of PII."""
        status = next_status(self.status, action)
        if status == Status.DISENROLLED:
            return replace(
                self, status=status, pii=Pii(), updated_at=now, expires_at=now + TOMBSTONE_LIFETIME
            )
        return replace(self, status=status, updated_at=now)


@dataclass(frozen=True)
class EnrollmentPage:
    items: list[Enrollment]
    # Where the page ended, as the store knows it; None on the last page. Clients get it only
    # sealed in a page key (``phoneid.services.page_keys``).
    last_position: str | None = None


def keeps_place(holder: Enrollment, newcomer: Enrollment) -> bool:
    """Whether ``holder``, the identity holding ``newcomer``'s place (its clientCustomerId, or its
    number without one), stays that place's identity: one the client still holds, unless it is
    inactive without a clientCustomerId (then the newcomer takes the place over)."""
    return holder.exists and (newcomer.client_customer_id is not None or holder.active)


def oldest_first(held: Iterable[Enrollment]) -> list[Enrollment]:
    """A number's identities in the order lookup answers them: by enrollment time, then serviceId."""
    return sorted(held, key=lambda e: (e.created_at, e.service_id))


def number_history(held: Sequence[Enrollment], short_tenure_since: datetime) -> NumberHistory:
    """What the identities a client holds on one number (active or not) tell the fraud policy:
    counts are of the active ones, the dates are of every one."""
    active = [e for e in held if e.active]
    return NumberHistory(
        identities=len(active),
        short_tenure_identities=sum(1 for e in active if e.created_at >= short_tenure_since),
        first_associated=min(e.created_at for e in held).date() if held else None,
        last_associated=max(e.created_at for e in held) if held else None,
    )
