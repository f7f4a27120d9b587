"""Phone numbers: E.164 normalisation, country and which regional stack serves it.

``phonenumbers`` is imported by the first number parsed, not by every handler that only names a
Region or masks a number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import phonenumbers

Region = Literal["US", "EU"]

# Numbers of these countries are served by the EU stack: the EEA, the UK and Switzerland, with the
# territories that share their numbering plans (Crown Dependencies and Gibraltar, Åland, the Faroes,
# Svalbard) and the European microstates. Every other country is served by the US stack.
_EUROPEAN = """
    AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE
    IS LI NO GB CH GG JE IM GI AX FO SJ AD MC SM VA
"""
EUROPE: frozenset[str] = frozenset(_EUROPEAN.split())

# National-format numbers (no "+") are read in the stack's home country.
_HOME_COUNTRY: dict[Region, str | None] = {"US": "US", "EU": None}


@cache
def _mobile_capable() -> frozenset[int]:
    from phonenumbers import PhoneNumberType

    return frozenset({PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE_OR_MOBILE, PhoneNumberType.PAGER})


@cache
def _number_type_helper() -> Callable[[str, Any], int] | None:
    """Its type test against one region's metadata (what ``number_type`` ends with); private, so
    looked up here with ``number_type`` itself as the fallback should a release rename it."""
    from phonenumbers import phonenumberutil

    helper: Callable[[str, Any], int] | None = getattr(phonenumberutil, "_number_type_helper", None)
    return helper


class InvalidPhoneNumber(ValueError):
    """The text is not a valid phone number; the message says why without repeating it."""


@dataclass(frozen=True)
class PhoneNumber:
    e164: str
    country: str
    mobile_capable: bool

    @property
    def region(self) -> Region:
        return "EU" if self.country in EUROPE else "US"

    @property
    def masked(self) -> str:
        """Safe for logs: country and the last two digits only."""
        return f"{self.country}:***{self.e164[-2:]}"


def parse_phone(text: str, stack_region: Region) -> PhoneNumber:
    import phonenumbers

    cleaned = text.strip()
    if not cleaned:
        raise InvalidPhoneNumber("must not be empty")
    try:
        parsed = phonenumbers.parse(cleaned, _HOME_COUNTRY[stack_region])
    except phonenumbers.NumberParseException as error:
        raise InvalidPhoneNumber("must be a phone number with country code, e.g. +12025550123") from error
    # A number is valid exactly when its type is known (that is how phonenumbers decides validity),
    # so one type lookup answers both.
    country = phonenumbers.region_code_for_number(parsed)
    kind = number_type_in(parsed, country)
    if kind == phonenumbers.PhoneNumberType.UNKNOWN:
        raise InvalidPhoneNumber("is not a valid phone number for its country code")
    if not country or country == "001":
        raise InvalidPhoneNumber("is not a number of a country (non-geographic numbers are not served)")
    return PhoneNumber(
        e164=phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164),
        country=country,
        mobile_capable=kind in _mobile_capable(),
    )


def number_type_in(parsed: phonenumbers.PhoneNumber, country: str | None) -> int:
    """``phonenumbers.number_type`` for a number whose region is known: that function finds the
    region again, which for a shared country code (+1: 25 regions) means matching the number
    against each region's patterns until one fits; a Connect file pays it for every row."""
    import phonenumbers

    if country is None or parsed.country_code is None:
        return int(phonenumbers.PhoneNumberType.UNKNOWN)  # no region has the country code: no type either
    metadata = phonenumbers.PhoneMetadata.metadata_for_region_or_calling_code(parsed.country_code, country)
    type_helper = _number_type_helper()
    if metadata is None or type_helper is None:
        return int(phonenumbers.number_type(parsed))
    return int(type_helper(phonenumbers.national_significant_number(parsed), metadata))


def mask(e164: str | None) -> str:
    return f"***{e164[-2:]}" if e164 else "-"
