"""Keys of the operator's signal lists, and line types.

An import and a lookup must turn the same person, number or address into the same key, however it
was spelled; every list uses these functions for that. Keys go from the broadest to the most
specific: an import stores an entry under its most specific key (the last), a lookup asks for every
key of the claim, so a listed entry matches every claim at least as specific as itself (a listed
name without a birth date matches that name with any birth date; a listed street address without a
unit matches every unit of it).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date

import phonenumbers
from phonenumbers import PhoneNumberType

# Line types the operator's registry (list ``line-types``) may give a number.
LINE_TYPES: tuple[str, ...] = (
    "mobile",
    "landline",
    "voip-fixed",
    "voip-nonfixed",
    "pager",
    "toll-free",
    "premium-rate",
    "shared-cost",
    "voicemail",
)

# What the numbering plan says of a number (``phonenumbers``). It cannot tell fixed from mobile in
# North America ("fixed-or-mobile"), and knows VoIP only where a country has dedicated ranges.
_PLAN_LINE_TYPES: dict[int, str] = {
    PhoneNumberType.MOBILE: "mobile",
    PhoneNumberType.FIXED_LINE: "landline",
    PhoneNumberType.FIXED_LINE_OR_MOBILE: "fixed-or-mobile",
    PhoneNumberType.VOIP: "voip",
    PhoneNumberType.PAGER: "pager",
    PhoneNumberType.TOLL_FREE: "toll-free",
    PhoneNumberType.PREMIUM_RATE: "premium-rate",
    PhoneNumberType.SHARED_COST: "shared-cost",
    PhoneNumberType.VOICEMAIL: "voicemail",
    PhoneNumberType.PERSONAL_NUMBER: "personal",
    PhoneNumberType.UAN: "uan",
}

# Street suffixes and directionals (USPS Publication 28 abbreviations), in any spelling, to one form.
_STREET_WORDS: dict[str, tuple[str, ...]] = {
    "st": ("street", "str", "strt"),
    "ave": ("avenue", "av", "aven", "avenu", "avn", "avnue"),
    "rd": ("road",),
    "blvd": ("boulevard", "boul", "boulv"),
    "dr": ("drive", "drv", "driv"),
    "ln": ("lane",),
    "ct": ("court", "crt"),
    "pl": ("place",),
    "ter": ("terrace", "terr"),
    "cir": ("circle", "circ", "crcl"),
    "hwy": ("highway", "hiway", "hway"),
    "pkwy": ("parkway", "parkwy", "pkway", "pky"),
    "sq": ("square", "sqr"),
    "trl": ("trail",),
    "way": ("wy",),
    "expy": ("expressway", "expw", "expr"),
    "fwy": ("freeway", "frwy"),
    "plz": ("plaza", "plza"),
    "aly": ("alley", "ally"),
    "cres": ("crescent",),
    "rte": ("route",),
    "n": ("north",),
    "s": ("south",),
    "e": ("east",),
    "w": ("west",),
    "ne": ("northeast",),
    "nw": ("northwest",),
    "se": ("southeast",),
    "sw": ("southwest",),
}
_STREET = {spelling: short for short, spellings in _STREET_WORDS.items() for spelling in (short, *spellings)}

# Unit designators: the kind of unit is not part of the key ("Apt 4B", "Suite 4B", "#4B" agree).
_UNITS = frozenset(
    {"apt", "apartment", "unit", "ste", "suite", "rm", "room", "fl", "floor", "bldg", "building", "#"}
)
_UNIT = "unit"

_STATE_NAMES = (
    "alabama:al alaska:ak arizona:az arkansas:ar california:ca colorado:co connecticut:ct delaware:de "
    "florida:fl georgia:ga hawaii:hi idaho:id illinois:il indiana:in iowa:ia kansas:ks kentucky:ky "
    "louisiana:la maine:me maryland:md massachusetts:ma michigan:mi minnesota:mn mississippi:ms "
    "missouri:mo montana:mt nebraska:ne nevada:nv new_hampshire:nh new_jersey:nj new_mexico:nm "
    "new_york:ny north_carolina:nc north_dakota:nd ohio:oh oklahoma:ok oregon:or pennsylvania:pa "
    "rhode_island:ri south_carolina:sc south_dakota:sd tennessee:tn texas:tx utah:ut vermont:vt "
    "virginia:va washington:wa west_virginia:wv wisconsin:wi wyoming:wy district_of_columbia:dc "
    "puerto_rico:pr guam:gu"
)
# US state names to their postal codes ("New York" = "NY"); other regions are only folded.
_US_STATES: dict[str, str] = {
    name.replace("_", " "): code for name, code in (pair.split(":") for pair in _STATE_NAMES.split())
}

_ZIP = re.compile(r"^(\d{5})(?:-?\d{4})?$")
_SSN = re.compile(r"^(\d{3})-?(\d{2})-?(\d{4})$")


def fold(text: str | None) -> str:
    """Case, accents and punctuation folded away: ``"  Zoë O'Brien-Smith "`` -> ``"zoe obrien smith"``.

    Apostrophes and periods join (``O'Brien`` = ``OBrien``, ``St.`` = ``St``); other punctuation
    separates words; ``#`` is kept as a word of its own (a unit designator).
    """
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", text)
    letters = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    letters = re.sub(r"['\u2019\u2018`.]", "", letters)
    letters = letters.replace("#", " # ")
    return " ".join(re.sub(r"[^\w\s#]|_", " ", letters).split())


def phone_key(e164: str) -> str:
    """The key of a number: its E.164 form (spaces and punctuation dropped)."""
    digits = re.sub(r"\D", "", e164)
    if not e164.strip().startswith("+") or not 8 <= len(digits) <= 15:
        raise ValueError("a phone number key needs an E.164 number")
    return "+" + digits


def _street_line(address: str) -> tuple[str, str]:
    """The folded street line with and without its unit: (``"12 n main st unit 4b"``, ``"12 n main st"``)."""
    words = [_STREET.get(word, word) for word in fold(address).split()]
    if words[:3] in (["p", "o", "box"], ["post", "office", "box"]):
        words = ["po", "box", *words[3:]]
    unit_at = next((i for i, word in enumerate(words) if i > 0 and word in _UNITS), None)
    if unit_at is None:
        line = " ".join(words)
        return line, line
    # "Apt 4-B" = "#4B"; each designator's identifier is one word ("Ste 200, Fl 2" -> "200 2").
    groups: list[str] = []
    for word in words[unit_at:]:
        if word in _UNITS:
            groups.append("")
        else:
            groups[-1] += word
    unit = [group for group in groups if group]
    street = " ".join(words[:unit_at])
    return " ".join([street, _UNIT, *unit]) if unit else street, street


def _postal(postal_code: str) -> str:
    cleaned = postal_code.strip()
    matched = _ZIP.match(cleaned)
    return matched.group(1) if matched else fold(cleaned).replace(" ", "")


def _region(region: str) -> str:
    folded = fold(region)
    return _US_STATES.get(folded, folded)


def address_keys(
    address: str,
    postal_code: str | None = None,
    city: str | None = None,
    region: str | None = None,
) -> tuple[str, ...]:
    """The keys of a street address, broadest first: ``"12 n main st|12207"`` (a US ZIP to its
    five digits), or without a postal code ``"12 n main st|albany|ny"``; with a unit, the key
    without the unit comes first and the one with it (``"... unit 4b|12207"``) last.

    Empty when the address cannot be keyed: no street line, or neither a postal code nor city and
    region.
    """
    with_unit, street = _street_line(address)
    if not street:
        return ()
    if postal_code and _postal(postal_code):
        place = _postal(postal_code)
    elif fold(city) and fold(region):
        place = f"{fold(city)}|{_region(region or '')}"
    else:
        return ()
    keys = [f"{street}|{place}"]
    if with_unit != street:
        keys.append(f"{with_unit}|{place}")
    return tuple(keys)


def name_key(first: str, last: str, dob: str | date | None = None) -> tuple[str, ...]:
    """The keys of a person: ``("noor haddad",)``, and with a birth date also
    ``"noor haddad|1987-06-15"`` (last, the more specific)."""
    name = f"{fold(first)} {fold(last)}".strip()
    if not name:
        raise ValueError("a name key needs a first or last name")
    if dob is None:
        return (name,)
    born = dob if isinstance(dob, date) else date.fromisoformat(dob.strip())
    return name, f"{name}|{born.isoformat()}"


def ssn_digits(ssn: str) -> str:
    """The nine digits of an SSN written ``123456789`` or ``123-45-6789``."""
    matched = _SSN.match(ssn.strip())
    if not matched:
        raise ValueError("an SSN has nine digits")
    return "".join(matched.groups())


def ssn_area_group(ssn: str) -> str:
    """The area and group numbers of an SSN (its first five digits), the key of ``ssn-issuance``."""
    return ssn_digits(ssn)[:5]


def ssn_mac_input(ssn: str) -> str:
    """What the keyed MAC of an SSN is computed over; the MAC is the SSN's key in every list
    (``code_mac.digest(ssn_mac_input(ssn))``): an SSN is never stored in clear."""
    return "list-ssn:" + ssn_digits(ssn)


def number_line_type(e164: str) -> str:
    """The line type the numbering plan gives a number: ``mobile``, ``landline``,
    ``fixed-or-mobile``, ``voip``, ``pager``, ``toll-free``, ``premium-rate``, ``shared-cost``,
    ``voicemail``, ``personal``, ``uan`` or ``unknown``."""
    try:
        parsed = phonenumbers.parse(e164, None)
    except phonenumbers.NumberParseException:
        return "unknown"
    return _PLAN_LINE_TYPES.get(phonenumbers.number_type(parsed), "unknown")
