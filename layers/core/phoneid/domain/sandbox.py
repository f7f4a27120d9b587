"""Sandbox test users: scripted people selected by phone number, one per scenario and region."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from typing import Any

from phoneid.domain.clients import Caller, Solution
from phoneid.domain.errors import SandboxAccessDenied, SandboxUserNotFound
from phoneid.domain.evaluation import SOURCE_FAILED
from phoneid.domain.identity import Address, Business, Identity
from phoneid.domain.phone import Region
from phoneid.domain.policy import Signal


class Scenario(StrEnum):
    OTP_PASS = "otp-pass"
    OTP_FAIL = "otp-fail"
    MOBILE_AUTH_PASS = "mobile-auth-pass"
    MOBILE_AUTH_FAIL = "mobile-auth-fail"
    MOBILE_AUTH_FAIL_OTP_PASS = "mobile-auth-fail-otp-pass"
    REPUTATION_FAIL = "reputation-fail"
    REVOKED_KEY = "revoked-key"
    HARD_FAIL_NA = "hard-fail-na"
    HARD_FAIL_INTL = "hard-fail-intl"
    VERIFIED_USER_FAIL = "verified-user-fail"
    VERIFIED_USER_PASS = "verified-user-pass"
    TOKEN_ONLY = "token-only"
    # One user per reason code of the fraud policy: possession passes with no client, and the
    # user's scripted signals raise the code in complete, unify-status (checkReputation) and verify.
    FRAUD_SIGNAL = "fraud-signal"


@dataclass(frozen=True)
class TestUser:
    __test__ = False  # not a pytest test class

    scenario: Scenario
    region: Region
    solution: Solution | None  # None: credentials of any solution may use the user
    description: str
    identity: Identity
    signals: Mapping[str, Any]

    @property
    def observations(self) -> dict[Signal, Any]:
        """What the user's signal sources say (``signals.observations``); the policy evaluates them."""
        scripted = self.signals.get("observations", {})
        return {
            Signal(name): SOURCE_FAILED if value == "source-failed" else value
            for name, value in scripted.items()
        }

    @property
    def solution_name(self) -> str:
        return self.solution.value if self.solution else "any"

    @property
    def phone_number(self) -> str:
        return self.identity.phone_number

    @property
    def possession_without_client(self) -> bool:
        return bool(self.signals.get("possessionWithoutClient"))


def _address(raw: Mapping[str, Any]) -> Address:
    return Address(
        address=raw.get("address"),
        city=raw.get("city"),
        region=raw.get("region"),
        postal_code=raw.get("postalCode"),
        extended_address=raw.get("extendedAddress"),
    )


def _business(raw: Mapping[str, Any]) -> Business:
    """A business in the shape of the identity file (``businessName``, ``relatedPersons``, ...)."""
    return Business(
        name=raw["businessName"],
        trade_name=raw.get("tradeName"),
        tax_id=raw.get("taxId"),
        address=_address(raw["businessAddress"]) if raw.get("businessAddress") else None,
        registration=tuple(sorted((raw.get("registrationFiling") or {}).items())),
        related_persons=tuple((p["firstName"], p["lastName"]) for p in raw.get("relatedPersons", ())),
    )


def _user(raw: Mapping[str, Any]) -> TestUser:
    return TestUser(
        scenario=Scenario(raw["scenario"]),
        region=raw["region"],
        solution=None if raw["solution"] == "any" else Solution(raw["solution"]),
        description=raw["description"],
        identity=Identity(
            phone_number=raw["phoneNumber"],
            first_name=raw["firstName"],
            last_name=raw["lastName"],
            dob=raw["dob"],
            ssn=raw["ssn"],
            addresses=tuple(_address(a) for a in raw["addresses"]),
            email_addresses=tuple(raw["emailAddresses"]),
            businesses=tuple(_business(b) for b in raw.get("businesses", ())),
        ),
        signals=dict(raw["signals"]),
    )


class Catalogue:
    """The Sandbox test users of one region."""

    def __init__(self, users: list[TestUser]) -> None:
        self._by_number = {user.phone_number: user for user in users}

    @classmethod
    def load(cls, region: Region | None = None) -> Catalogue:
        text = resources.files("phoneid").joinpath("data/sandbox_users.json").read_text("utf-8")
        users = [_user(raw) for raw in json.loads(text)["users"]]
        return cls([u for u in users if region is None or u.region == region])

    def __iter__(self) -> Iterator[TestUser]:
        return iter(self._by_number.values())

    def find(self, phone_number: str | None) -> TestUser | None:
        return self._by_number.get(phone_number) if phone_number else None

    def select(self, phone_number: str | None, caller: Caller) -> TestUser:
        """The test user a Sandbox call addresses: 8007 when none matches, 8009 for another solution."""
        user = self.find(phone_number)
        if user is None:
            raise SandboxUserNotFound()
        if user.solution is not None and user.solution != caller.solution:
            raise SandboxAccessDenied()
        return user
