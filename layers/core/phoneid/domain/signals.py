"""What signal sources answer: the carrier (CAMARA), the operator's lists and PhoneID's own records.

Sources answer facts; the policy (``phoneid/policy``) decides which facts raise which reason codes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any, Literal


class SignalSourceError(Exception):
    """A signal source refused, failed or could not be reached; the policy says what that means."""

    # Set by the adapter that raised it from a provider's throttling (phoneid.adapters.throttling).
    throttled: bool = False


KycAnswer = Literal["true", "false", "not_available"]


@dataclass(frozen=True)
class KycClaim:
    """What the request says about the person, as CAMARA KYC Match takes it; None: not supplied."""

    given_name: str | None = None
    family_name: str | None = None
    birthdate: str | None = None  # YYYY-MM-DD
    id_document: str | None = None  # the SSN
    address: str | None = None
    postal_code: str | None = None
    locality: str | None = None
    region: str | None = None
    email: str | None = None

    def supplied(self) -> dict[str, str]:
        return {name: value for name, value in self.__dict__.items() if value}


@dataclass(frozen=True)
class KycResult:
    """The operator's answer per supplied field: ``"true"``, ``"false"`` or ``"not_available"``."""

    fields: Mapping[str, KycAnswer] = field(default_factory=dict)

    @property
    def name(self) -> KycAnswer | None:
        answers = [self.fields[f] for f in ("given_name", "family_name") if f in self.fields]
        if not answers:
            return None
        if "false" in answers:
            return "false"
        return "true" if all(a == "true" for a in answers) else "not_available"

    def elements(self) -> dict[str, KycAnswer]:
        """The answers grouped into the four identity elements: name, address, birth date, SSN."""
        groups = {
            "name": ("given_name", "family_name"),
            "address": ("address", "postal_code", "locality", "region"),
            "dob": ("birthdate",),
            "ssn": ("id_document",),
        }
        result: dict[str, KycAnswer] = {}
        for element, names in groups.items():
            answers = [self.fields[n] for n in names if n in self.fields]
            if not answers:
                continue
            if "false" in answers:
                result[element] = "false"
            elif all(a == "true" for a in answers):
                result[element] = "true"
            else:
                result[element] = "not_available"
        return result


class ListKind(StrEnum):
    """Lists an operator maintains and imports with ``phoneid signals import KIND FILE``."""

    PUBLIC_SMS = "public-sms"  # numbers whose SMS are posted publicly: key phoneNumber
    LINE_TYPES = "line-types"  # override registry: phoneNumber -> lineType
    SIM_TRUST = "sim-trust"  # phoneNumber -> score 0..100
    BOT_NUMBERS = "bot-numbers"  # numbers linked to bot activity
    PORT_EVENTS = "port-events"  # phoneNumber -> portedAt
    AML = "aml"  # watch list: name (and birth date)
    CORRECTIONAL_ADDRESSES = "correctional-addresses"  # address, postal code
    DECEASED = "deceased"  # phoneNumber and/or SSN
    SSN_ISSUANCE = "ssn-issuance"  # SSN area and group (first five digits) -> issuedFrom


@dataclass(frozen=True)
class ListEntry:
    kind: ListKind
    key: str  # normalised: E.164 number, folded name, address key, or a keyed MAC of an SSN
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ActivityCounts:
    """Checks (verifications, completions, unified authentications) of one client seen before now."""

    prior: int  # of the number, within the history window
    recent: int  # of the number, within the recent-activity window
    recent_sharing_attributes: int  # of other numbers sharing an identity attribute, recent window


class ChangeKind(StrEnum):
    """Change events the monitor finds on enrolled numbers (and webhooks deliver)."""

    PHONE_NUMBER_CHANGE = "PHONE_NUMBER_CHANGE"
    DISCONNECT = "DISCONNECT"
    PORT = "PORT"
    LINE_TYPE_CHANGE = "LINE_TYPE_CHANGE"
    SIM_SWAP = "SIM_SWAP"
    MOVED_OUT_OF_COVERAGE = "MOVED_OUT_OF_COVERAGE"


@dataclass(frozen=True)
class ChangeEvent:
    event_id: str
    kind: ChangeKind
    phone_number: str
    occurred_at: datetime
    client_id: str
    service_id: str | None = None
    client_customer_id: str | None = None
    description: str = ""


@dataclass(frozen=True)
class NumberHistory:
    """What Identity Manager knows of one number for one client."""

    identities: int  # active identities enrolled on the number
    short_tenure_identities: int  # of those, enrolled within the policy's short-tenure window
    first_associated: date | None  # earliest enrollment still held
    last_associated: datetime | None  # latest enrollment
