"""API clients (tenants): credentials, tier, region, solution, allowed countries and operator flags."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from phoneid.domain.phone import Region
from phoneid.domain.webhooks import Webhook

Tier = Literal["sandbox", "production"]


class Solution(StrEnum):
    """Sandbox test users belong to one solution; credentials of another solution get 8009."""

    IDENTITY = "identity"  # staged flow and unified authentication
    VERIFIED_USER = "verified-user"  # verify and Connect batch files


class Flag(StrEnum):
    """Capabilities the operator switches on or off per client."""

    PHONE_NUMBER_CHANGE = "phone-number-change"
    KEY_PERSISTENCE = "key-persistence"
    AUTO_ENROLLMENT = "auto-enrollment"
    PO_BOX_ADDRESSES = "po-box-addresses"


DEFAULT_FLAGS: frozenset[Flag] = frozenset({Flag.AUTO_ENROLLMENT})

ALL_COUNTRIES = "*"


@dataclass(frozen=True)
class Client:
    client_id: str
    tier: Tier
    region: Region
    solution: Solution
    secret_hash: str
    created_at: datetime
    name: str = ""
    # ISO 3166 alpha-2 codes, or {"*"}: every country its region serves.
    allowed_countries: frozenset[str] = frozenset({ALL_COUNTRIES})
    flags: frozenset[Flag] = DEFAULT_FLAGS
    enabled: bool = True
    # Public (not a secret): web SDKs name it to use key persistence, when the flag allows.
    public_api_key: str = ""
    # The client's own fraud policy document (validated when set); None: the stack's default.
    policy: Mapping[str, Any] | None = None
    # Where change events of its enrolled identities are POSTed; None: no deliveries.
    webhook: Webhook | None = None

    def as_caller(self) -> Caller:
        return Caller(
            client_id=self.client_id,
            solution=self.solution,
            allowed_countries=self.allowed_countries,
            flags=self.flags,
        )


@dataclass(frozen=True)
class Caller:
    """Who is calling a /v3 endpoint, as established by the authorizer."""

    client_id: str
    solution: Solution
    allowed_countries: frozenset[str] = frozenset({ALL_COUNTRIES})
    flags: frozenset[Flag] = field(default=DEFAULT_FLAGS)

    def may_use_country(self, country: str) -> bool:
        return ALL_COUNTRIES in self.allowed_countries or country in self.allowed_countries

    def has(self, flag: Flag) -> bool:
        return flag in self.flags
