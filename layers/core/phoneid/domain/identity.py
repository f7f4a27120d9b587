"""Identity records and how customer-supplied data is matched against them."""

from __future__ import annotations

import hmac
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

SSN_PATTERN = r"^(\d{4}|\d{9}|\d{3}-\d{2}-\d{4})$"
DOB_PATTERN = r"^(\d{4}-\d{2}-\d{2}|\d{4}-\d{2}|\d{2}-\d{2})$"


class Element(StrEnum):
    """The four identity elements."""

    NAME = "name"
    ADDRESS = "address"
    DOB = "dob"
    SSN = "ssn"


@dataclass(frozen=True)
class Address:
    address: str | None = None
    city: str | None = None
    region: str | None = None
    postal_code: str | None = None
    extended_address: str | None = None


@dataclass(frozen=True)
class Business:
    """A business the person is tied to (Pre-Fill for Business), from the identity records."""

    name: str
    trade_name: str | None = None
    tax_id: str | None = None
    address: Address | None = None
    # {date, region, registrationNumber, registrationType}
    registration: tuple[tuple[str, str], ...] = ()
    related_persons: tuple[tuple[str, str], ...] = ()  # (first name, last name)


@dataclass(frozen=True)
class Identity:
    phone_number: str
    first_name: str
    last_name: str
    dob: str  # YYYY-MM-DD
    ssn: str  # nine digits
    addresses: tuple[Address, ...] = ()
    email_addresses: tuple[str, ...] = ()
    # Reputation findings about the number (GFP reason codes), loaded with the identity.
    reputation_reasons: tuple[int, ...] = ()
    businesses: tuple[Business, ...] = ()


@dataclass(frozen=True)
class Claimed:
    """What a customer or integrator says about a person; None means not supplied."""

    first_name: str | None = None
    last_name: str | None = None
    dob: str | None = None
    ssn: str | None = None
    addresses: tuple[Address, ...] = ()


@dataclass(frozen=True)
class MatchResult:
    matched: frozenset[Element] = field(default_factory=frozenset)
    mismatched: frozenset[Element] = field(default_factory=frozenset)


def ssn_digits(ssn: str) -> str:
    return ssn.replace("-", "")


def dob_is_valid(dob: str) -> bool:
    """True for an existing date in one of the forms YYYY-MM-DD, YYYY-MM or MM-DD."""
    if not re.fullmatch(DOB_PATTERN, dob):
        return False
    parts = dob.split("-")
    try:
        if len(parts) == 3:
            date(int(parts[0]), int(parts[1]), int(parts[2]))
        elif len(parts[0]) == 4:
            date(int(parts[0]), int(parts[1]), 1)
        else:
            date(2000, int(parts[0]), int(parts[1]))  # a leap year, so 02-29 is a real birthday
    except ValueError:
        return False
    return True


def ssn_matches(given: str, full_ssn: str) -> bool:
    digits = ssn_digits(given)
    expected = full_ssn if len(digits) == 9 else full_ssn[-4:]
    return hmac.compare_digest(digits, expected)


def dob_matches(given: str, full_dob: str) -> bool:
    """Compare in the form given: a full date, year and month, or month and day."""
    year, month, day = full_dob.split("-")
    parts = given.split("-")
    if len(parts) == 3:
        expected = f"{year}-{month}-{day}"
    elif len(parts[0]) == 4:
        expected = f"{year}-{month}"
    else:
        expected = f"{month}-{day}"
    return hmac.compare_digest(given, expected)


def fold(text: str | None) -> str:
    """Case-, accent- and punctuation-insensitive form for comparing names and addresses."""
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", text)
    letters = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w\s]", " ", letters.casefold()).split())


def _address_matches(given: Address, known: Address) -> bool:
    if fold(given.address) != fold(known.address):
        return False
    if given.postal_code and known.postal_code:
        return fold(given.postal_code)[:5] == fold(known.postal_code)[:5]
    return fold(given.city) == fold(known.city) and fold(given.region) == fold(known.region)


def match(claimed: Claimed, identity: Identity) -> MatchResult:
    """Match each supplied element; elements not supplied are neither matched nor mismatched."""
    matched: set[Element] = set()
    mismatched: set[Element] = set()

    def record(element: Element, ok: bool) -> None:
        (matched if ok else mismatched).add(element)

    if claimed.first_name is not None or claimed.last_name is not None:
        record(
            Element.NAME,
            fold(claimed.first_name) == fold(identity.first_name)
            and fold(claimed.last_name) == fold(identity.last_name),
        )
    if claimed.addresses:
        record(
            Element.ADDRESS,
            any(_address_matches(g, k) for g in claimed.addresses for k in identity.addresses),
        )
    if claimed.dob is not None:
        record(Element.DOB, dob_matches(claimed.dob, identity.dob))
    if claimed.ssn is not None:
        record(Element.SSN, ssn_matches(claimed.ssn, identity.ssn))
    return MatchResult(matched=frozenset(matched), mismatched=frozenset(mismatched))
