"""The keys every signal list uses: spellings of one person, number or address give one key, and
different ones do not."""

from __future__ import annotations

from datetime import date

import pytest

from phoneid.domain.lists import (
    LINE_TYPES,
    address_keys,
    name_key,
    number_line_type,
    phone_key,
    ssn_area_group,
    ssn_mac_input,
)


@pytest.mark.parametrize(
    "spelling", ["+12025550142", "+1 202 555 0142", "+1 (202) 555-0142", " +1.202.555.0142 "]
)
def test_spellings_of_one_number_give_its_e164_key(spelling: str) -> None:
    # Given a number written with spaces, brackets, dashes or dots
    # When keyed
    # Then the key is its E.164 form
    assert phone_key(spelling) == "+12025550142"


@pytest.mark.parametrize("text", ["2025550142", "+1202", "", "call me"])
def test_a_number_without_country_code_or_digits_has_no_key(text: str) -> None:
    # Given text that is not an E.164 number
    # When keyed
    # Then it is refused, without repeating it
    with pytest.raises(ValueError, match=r"E\.164") as refused:
        phone_key(text)
    assert text.strip() == "" or text not in str(refused.value)


@pytest.mark.parametrize(
    "spelling",
    [
        ("12 North Main Street", "12207"),
        ("12 N. Main St.", "12207-1234"),
        ("12 n main st", " 122071234 "),
        ("12 NORTH MAIN STR", "12207"),
    ],
)
def test_spellings_of_one_street_address_give_one_key(spelling: tuple[str, str]) -> None:
    # Given one street address in another case, with abbreviations, punctuation and a ZIP+4
    address, postal = spelling

    # When keyed
    keys = address_keys(address, postal)

    # Then the key is the folded street line and the five-digit ZIP
    assert keys == ("12 n main st|12207",)


@pytest.mark.parametrize(
    "pair",
    [
        ("1 Quarry Avenue", "1 Quarry Ave"),
        ("1 Quarry Av.", "1 quarry AVE"),
        ("1 Quarry Road", "1 Quarry Rd"),
        ("1 Quarry Boulevard", "1 Quarry Blvd"),
        ("1 Quarry Drive", "1 Quarry Dr"),
        ("1 Quarry Lane", "1 Quarry Ln"),
        ("1 Quarry Court", "1 Quarry Ct"),
        ("1 Quarry Highway", "1 Quarry Hwy"),
        ("1 Quarry Parkway", "1 Quarry Pkwy"),
        ("10 Southwest Rue de l'Église", "10 SW Rue de L\u2019Eglise"),
        ("P.O. Box 12", "Post Office Box 12"),
        ("PO Box 12", "P O Box 12"),
    ],
)
def test_street_suffixes_directions_accents_and_po_boxes_are_normalised(pair: tuple[str, str]) -> None:
    # Given two spellings of one street line
    first, second = pair

    # When keyed with the same ZIP
    # Then they give the same keys
    assert address_keys(first, "12207") == address_keys(second, "12207")


@pytest.mark.parametrize(
    "unit", ["Apt 4B", "Apartment 4-B", "#4B", "Apt. #4b", "Unit 4B", "Suite 4B", "Ste. 4 B"]
)
def test_unit_designators_are_normalised(unit: str) -> None:
    # Given one street line with its unit written in different ways
    # When keyed
    keys = address_keys(f"12 Main Street, {unit}", "12207")

    # Then the keys are the street without the unit, then with the normalised unit
    assert keys == ("12 main st|12207", "12 main st unit 4b|12207")


def test_without_postal_code_the_key_takes_city_and_region() -> None:
    # Given an address with city and region but no postal code, the region spelled out or abbreviated
    # When keyed
    spelled = address_keys("42 Quarry Road", city="Albany", region="New York")
    short = address_keys("42 Quarry Rd.", city="ALBANY", region="NY")

    # Then both give the street line with folded city and region
    assert spelled == short == ("42 quarry rd|albany|ny",)


def test_the_postal_code_wins_over_city_and_region() -> None:
    # Given an address with a postal code and city and region
    # When keyed
    # Then the key uses the postal code only
    assert address_keys("42 Quarry Road", "12207", "Albany", "NY") == ("42 quarry rd|12207",)


def test_non_us_postal_codes_are_folded_not_cut() -> None:
    # Given a UK postcode written two ways
    # When keyed
    # Then the spellings agree and the postcode is whole
    assert address_keys("10 Downing Street", "SW1A 2AA") == address_keys("10 Downing St", "sw1a2aa")
    assert address_keys("10 Downing Street", "SW1A 2AA") == ("10 downing st|sw1a2aa",)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("12 Main St", "12207"), ("14 Main St", "12207")),
        (("12 Main St", "12207"), ("12 Main Ave", "12207")),
        (("12 Main St", "12207"), ("12 Main St", "12208")),
        (("12 Main St", "12207"), ("12 North Main St", "12207")),
        (("12 Main St Apt 4B", "12207"), ("12 Main St Apt 4C", "12207")),
    ],
)
def test_different_addresses_give_different_keys(first: tuple[str, str], second: tuple[str, str]) -> None:
    # Given two different places
    # When keyed
    # Then their most specific keys differ
    assert address_keys(*first)[-1] != address_keys(*second)[-1]


def test_city_and_region_keys_differ_across_places() -> None:
    # Given one street line in two cities
    # When keyed
    # Then the keys differ
    assert address_keys("1 Main St", city="Albany", region="NY") != address_keys(
        "1 Main St", city="Albany", region="GA"
    )


@pytest.mark.parametrize(
    ("address", "postal", "city", "region"),
    [
        ("12 Main St", None, None, None),
        ("12 Main St", None, "Albany", None),
        ("12 Main St", "", None, "NY"),
        ("...", "12207", None, None),
    ],
)
def test_an_address_without_place_or_street_has_no_key(
    address: str, postal: str | None, city: str | None, region: str | None
) -> None:
    # Given an address that cannot be placed (no postal code, nor city and region) or has no street
    # When keyed
    # Then there is no key (a street line alone would match across the country)
    assert address_keys(address, postal, city, region) == ()


@pytest.mark.parametrize(
    ("first", "last"),
    [("Noor", "Haddad"), ("NOOR", "haddad"), ("  Noor ", " Haddad  "), ("Nóor", "Hàddad")],
)
def test_spellings_of_one_name_give_one_key(first: str, last: str) -> None:
    # Given a name in another case, with spaces or accents
    # When keyed
    # Then the key is the folded "first last"
    assert name_key(first, last) == ("noor haddad",)


def test_apostrophes_join_and_hyphens_separate_names() -> None:
    # Given names with apostrophes and hyphens
    # When keyed
    # Then O'Brien = OBrien and Mary-Jane = Mary Jane
    assert name_key("Mary-Jane", "O'Brien") == name_key("Mary Jane", "OBrien") == ("mary jane obrien",)
    assert name_key("Zoë", "O\u2019Brien") == name_key("zoe", "o'brien")


def test_a_birth_date_adds_a_more_specific_key() -> None:
    # Given a name with a birth date, as text or as a date
    # When keyed
    # Then the name key comes first and the name with the date second
    expected = ("noor haddad", "noor haddad|1987-06-15")
    assert name_key("Noor", "Haddad", "1987-06-15") == expected
    assert name_key("Noor", "Haddad", date(1987, 6, 15)) == expected


def test_different_people_give_different_keys() -> None:
    # Given people differing in first name, last name, order or birth date
    # When keyed
    # Then their keys differ
    assert name_key("Noor", "Haddad") != name_key("Nour", "Haddad")
    assert name_key("Noor", "Haddad") != name_key("Haddad", "Noor")
    assert name_key("Noor", "Haddad", "1987-06-15")[-1] != name_key("Noor", "Haddad", "1987-06-16")[-1]


def test_an_impossible_birth_date_is_refused() -> None:
    # Given a birth date that does not exist
    # When keyed
    # Then it is refused
    with pytest.raises(ValueError, match="day"):
        name_key("Noor", "Haddad", "1987-02-30")


@pytest.mark.parametrize("ssn", ["123456789", "123-45-6789", " 123-45-6789 "])
def test_an_ssn_gives_its_area_and_group_and_its_mac_input(ssn: str) -> None:
    # Given an SSN with or without dashes
    # When keyed
    # Then the area and group are its first five digits and the MAC input has its nine digits
    assert ssn_area_group(ssn) == "12345"
    assert ssn_mac_input(ssn) == "list-ssn:123456789"


@pytest.mark.parametrize("ssn", ["12345678", "1234-56-789", "12345678a", ""])
def test_a_malformed_ssn_is_refused_without_its_digits(ssn: str) -> None:
    # Given text that is not nine SSN digits
    # When keyed
    with pytest.raises(ValueError, match="nine digits") as refused:
        ssn_area_group(ssn)

    # Then the error does not repeat it
    assert not ssn or ssn not in str(refused.value)


@pytest.mark.parametrize(
    ("number", "line_type"),
    [
        ("+12025550142", "fixed-or-mobile"),  # North America: the plan cannot tell
        ("+447400123456", "mobile"),
        ("+442071234567", "landline"),
        ("+18005550199", "toll-free"),
        ("+19005550199", "premium-rate"),
        ("+445612345678", "voip"),
        ("+447640123456", "pager"),
        ("+447012345678", "personal"),
        ("+445512345678", "uan"),
        ("+4420", "unknown"),
        ("not a number", "unknown"),
    ],
)
def test_the_numbering_plan_gives_a_line_type(number: str, line_type: str) -> None:
    # Given a number of a known range (or none)
    # When its line type is asked
    # Then the plan's type is named
    assert number_line_type(number) == line_type


def test_the_registry_line_types_are_the_policy_values() -> None:
    # Given the values the registry may hold
    # Then they are exactly the nine the policy knows, VoIP split into fixed and non-fixed
    assert LINE_TYPES == (
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
