"""Phone numbers: E.164 normalisation, which stack serves them, and masking."""

from __future__ import annotations

import re

import pytest

from phoneid.domain.phone import InvalidPhoneNumber, Region, mask, parse_phone


@pytest.mark.parametrize(
    ("text", "region", "e164", "country"),
    [
        ("+12025550123", "US", "+12025550123", "US"),
        ("+1 (202) 555-0123", "US", "+12025550123", "US"),
        ("  +12025550123  ", "US", "+12025550123", "US"),
        ("+353 85 123 4567", "EU", "+353851234567", "IE"),
        ("+33 6 12 34 56 78", "EU", "+33612345678", "FR"),
        ("+12025550123", "EU", "+12025550123", "US"),
    ],
)
def test_numbers_with_a_country_code_are_normalised_to_e164(
    text: str, region: Region, e164: str, country: str
) -> None:
    # Given a number written with its country code
    # When parsed on a stack
    phone = parse_phone(text, region)

    # Then it is in E.164 form with its country
    assert (phone.e164, phone.country) == (e164, country)


@pytest.mark.parametrize("text", ["(202) 555-0123", "202-555-0123", "2025550123"])
def test_the_us_stack_reads_national_numbers_as_us_numbers(text: str) -> None:
    # Given a US number written without a country code
    # When parsed on the US stack
    phone = parse_phone(text, "US")

    # Then it is read as a US number
    assert (phone.e164, phone.country) == ("+12025550123", "US")


def test_the_eu_stack_requires_a_country_code() -> None:
    # Given an Irish number in national format
    # When parsed on the EU stack (which has no home country)
    # Then it is refused
    with pytest.raises(InvalidPhoneNumber, match="country code"):
        parse_phone("085 987 6543", "EU")


@pytest.mark.parametrize(
    ("text", "region"),
    [
        ("+1202555012", "US"),
        ("98765", "US"),
        ("not a number", "US"),
        ("+35399", "EU"),
        ("", "US"),
        ("   ", "EU"),
    ],
)
def test_invalid_numbers_are_refused_without_repeating_the_digits(text: str, region: Region) -> None:
    # Given text that is not a valid phone number
    # When parsed
    with pytest.raises(InvalidPhoneNumber) as raised:
        parse_phone(text, region)

    # Then the message says why without repeating what was sent
    message = str(raised.value)
    assert message
    digits = re.sub(r"\D", "", text)
    if digits:
        assert digits not in re.sub(r"\D", "", message)
    if text.strip():
        assert text.strip() not in message


@pytest.mark.parametrize(
    ("e164", "region"),
    [
        ("+353851234567", "EU"),
        ("+447400123456", "EU"),
        ("+33612345678", "EU"),
        ("+12025550123", "US"),
        ("+14165550123", "US"),
        ("+61491570149", "US"),
    ],
    ids=["IE", "GB", "FR", "US", "CA", "AU"],
)
def test_region_names_the_stack_serving_the_country(e164: str, region: Region) -> None:
    # Given a number of a country
    # When parsed (on either stack)
    phone = parse_phone(e164, "EU")

    # Then its region is the stack that serves the country
    assert phone.region == region


def test_masked_form_shows_only_the_last_two_digits() -> None:
    # Given a parsed number
    phone = parse_phone("+12025550187", "US")

    # When masked for logs
    masked = phone.masked

    # Then only its last two digits are shown
    assert re.sub(r"\D", "", masked) == "87"
    assert masked.endswith("87")
    assert re.sub(r"\D", "", mask(phone.e164)) == "87"


def test_mask_of_no_number_is_a_dash() -> None:
    # Given no number (US Mobile Auth without a number)
    # When masked
    # Then a dash stands in for it
    assert mask(None) == "-"


@pytest.mark.parametrize(
    ("number", "country"),
    [("+447911123456", "GG"), ("+447797123456", "JE"), ("+447624123456", "IM"), ("+35020012345", "GI")],
)
def test_territories_sharing_european_numbering_plans_are_served_by_the_eu_stack(
    number: str, country: str
) -> None:
    # Given a number of a Crown Dependency or Gibraltar
    phone = parse_phone(number, "EU")

    # Then it is European, like the UK whose plan it shares
    assert phone.country == country
    assert phone.region == "EU"


def test_the_type_found_for_a_known_region_is_phonenumbers_own() -> None:
    """``number_type_in`` skips finding the region again: on numbers of every kind and of countries
    that share a country code, it answers what ``phonenumbers.number_type`` answers."""
    import random

    import phonenumbers

    from phoneid.domain.phone import number_type_in

    rng = random.Random(7)
    codes = [1, 7, 44, 33, 49, 262, 590, 599, 61, 47, 358, 39, 800, 870, 882]
    checked = valid = 0
    for _ in range(4000):
        code = rng.choice(codes)
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(6, 11)))
        try:
            number = phonenumbers.parse(f"+{code}{digits}")
        except phonenumbers.NumberParseException:
            continue
        country = phonenumbers.region_code_for_number(number)
        assert number_type_in(number, country) == phonenumbers.number_type(number), f"+{code}{digits}"
        checked += 1
        valid += phonenumbers.number_type(number) != phonenumbers.PhoneNumberType.UNKNOWN
    assert checked > 3000
    assert valid > 300  # valid numbers of several kinds, not only refusals
