"""Identity records and how customer-supplied data is matched against them."""

from __future__ import annotations

import hmac
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

# SSNs that are never issued are refused: area 000 or 666, group 00, serial 0000 (so a last four of
# 0000 too). Areas 900-999 are never SSNs but stay accepted: ITINs, which people without an SSN give
# in its place, use them (docs/api.md#dates-of-birth-and-ssns).
_AREA = r"(?:00[1-9]|0[1-9][0-9]|[1-57-9][0-9][0-9]|6[0-57-9][0-9]|66[0-57-9])"
_GROUP = r"(?:0[1-9]|[1-9][0-9])"
_SERIAL = r"(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9][0-9]|[1-9][0-9]{3})"
_FULL_SSN = rf"{_AREA}{_GROUP}{_SERIAL}|{_AREA}-{_GROUP}-{_SERIAL}"
FULL_SSN_PATTERN = rf"^(?:{_FULL_SSN})$"
SSN_PATTERN = rf"^(?:{_FULL_SSN}|{_SERIAL})$"  # or its last four
_ISSUED = "of a number that can be issued (area not 000 or 666, group not 00, serial not 0000)"
SSN_RULE = f"must be 9 digits, 123-45-6789 or the last four, {_ISSUED}"
FULL_SSN_RULE = f"must be 9 digits or 123-45-6789, {_ISSUED}"

# Dates of birth: years from 1900, months 01-12, days that exist in their month (02-29 only in a leap
# year, which the pattern cannot say), and never after today.
_YEAR = r"(?:19|2[0-9])[0-9]{2}"
_MONTH = r"(?:0[1-9]|1[0-2])"
_MONTH_DAY = (
    r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31|02-29)"
)
FULL_DOB_PATTERN = rf"^{_YEAR}-{_MONTH_DAY}$"
DOB_PATTERN = rf"^(?:{_YEAR}-{_MONTH_DAY}|{_YEAR}-{_MONTH}|{_MONTH_DAY})$"
DOB_RULE = "must be an existing date from 1900 as YYYY-MM-DD, YYYY-MM or MM-DD"
FULL_DOB_RULE = "must be an existing date from 1900 as YYYY-MM-DD"
DOB_FUTURE_RULE = "must not be in the future"


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
    """True for an existing date from 1900 in one of the forms YYYY-MM-DD, YYYY-MM or MM-DD."""
    if not re.fullmatch(DOB_PATTERN, dob):
        return False
    parts = dob.split("-")
    try:
        if len(parts) == 3:
            date(int(parts[0]), int(parts[1]), int(parts[2]))  # 02-29 of a year that is not leap
    except ValueError:
        return False
    return True


def dob_problem(dob: str, today: date, *, full: bool = False) -> str | None:
    """The rule a date of birth breaks, or None; the rule only, never the value (it is PII)."""
    if not dob_is_valid(dob) or (full and not re.fullmatch(FULL_DOB_PATTERN, dob)):
        return FULL_DOB_RULE if full else DOB_RULE
    parts = [int(part) for part in dob.split("-")]
    if len(dob) == 10 and date(*parts) > today:
        return DOB_FUTURE_RULE
    if len(dob) == 7 and (parts[0], parts[1]) > (today.year, today.month):
        return DOB_FUTURE_RULE
    return None  # MM-DD names no year: never in the future


def ssn_problem(ssn: str, *, full: bool = False) -> str | None:
    """The rule an SSN (or its last four, unless ``full``) breaks, or None; never the value."""
    if re.fullmatch(FULL_SSN_PATTERN if full else SSN_PATTERN, ssn):
        return None
    return FULL_SSN_RULE if full else SSN_RULE


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
