"""Matching what a customer claims against an identity record."""

from __future__ import annotations

import pytest

from phoneid.domain.identity import (
    Address,
    Claimed,
    Element,
    dob_is_valid,
    dob_matches,
    match,
    ssn_digits,
    ssn_matches,
)
from tests.unit.helpers import identity

FULL_SSN = "123456789"
FULL_DOB = "1987-06-15"


@pytest.mark.parametrize("given", ["123456789", "6789"])
def test_ssn_matches_the_full_number_or_its_last_four(given: str) -> None:
    # Given an identity's full SSN
    # When the full SSN or its last four are given
    # Then they match
    assert ssn_matches(given, FULL_SSN)


def test_ssn_in_dashed_form_matches_once_reduced_to_digits() -> None:
    # Given a dashed SSN as a customer types it
    given = ssn_digits("123-45-6789")

    # When it is compared with the stored digits
    # Then it matches
    assert given == "123456789"
    assert ssn_matches(given, FULL_SSN)


@pytest.mark.parametrize("given", ["123456780", "6788", "1234"])
def test_ssn_does_not_match_other_digits(given: str) -> None:
    # Given an identity's full SSN
    # When other digits are given (a wrong SSN, wrong last four, or the first four)
    # Then they do not match
    assert not ssn_matches(given, FULL_SSN)


@pytest.mark.parametrize("given", ["1987-06-15", "1987-06", "06-15"])
def test_dob_matches_in_each_of_the_three_forms(given: str) -> None:
    # Given an identity born on 1987-06-15
    # When the date is given as YYYY-MM-DD, YYYY-MM or MM-DD
    # Then it matches
    assert dob_matches(given, FULL_DOB)


@pytest.mark.parametrize("given", ["1987-06-16", "1988-06", "06-16", "1987-07"])
def test_dob_does_not_match_another_date_in_any_form(given: str) -> None:
    # Given an identity born on 1987-06-15
    # When another date is given
    # Then it does not match
    assert not dob_matches(given, FULL_DOB)


@pytest.mark.parametrize("dob", ["1999-02-28", "2000-02-29", "1999-12", "02-29", "12-31"])
def test_dob_is_valid_accepts_existing_dates(dob: str) -> None:
    # Given an existing date in one of the forms (02-29 is a real birthday)
    # When it is checked
    # Then it is valid
    assert dob_is_valid(dob)


@pytest.mark.parametrize("dob", ["1999-02-30", "13-01", "2023-00", "1999-2-01", "19990201", "", "02/29"])
def test_dob_is_valid_rejects_impossible_dates_and_other_forms(dob: str) -> None:
    # Given a date that does not exist or is in another form
    # When it is checked
    # Then it is invalid
    assert not dob_is_valid(dob)


def test_names_match_whatever_their_case_and_accents() -> None:
    # Given an identity named Zoë O'Brien
    record = identity(first_name="Zoë", last_name="O'Brien")

    # When the name is claimed without the accent, in another case and without the apostrophe
    result = match(Claimed(first_name="ZOE", last_name="o brien"), record)

    # Then the name matches
    assert result.matched == {Element.NAME}
    assert result.mismatched == frozenset()


def test_another_name_is_a_mismatch() -> None:
    # Given an identity named Noor Haddad
    record = identity()

    # When the first name is right but the last name is not
    result = match(Claimed(first_name="Noor", last_name="Hadad"), record)

    # Then the name is mismatched
    assert result.mismatched == {Element.NAME}
    assert result.matched == frozenset()


@pytest.mark.parametrize(
    "claimed",
    [
        Address(address="42 quarry road", postal_code="12207"),
        Address(address="42 Quarry Road", postal_code="12207-4410"),
        Address(address="42 Quarry Road", city="ALBANY", region="ny"),
    ],
)
def test_an_address_matches_by_postal_code_first_five_or_by_city_and_region(claimed: Address) -> None:
    # Given an identity at 42 Quarry Road, Albany NY 12207
    record = identity()

    # When the street is claimed with the postal code (ZIP+4 included) or with city and region
    result = match(Claimed(addresses=(claimed,)), record)

    # Then the address matches
    assert result.matched == {Element.ADDRESS}


@pytest.mark.parametrize(
    "claimed",
    [
        Address(address="42 Quarry Road", postal_code="12208"),
        Address(address="42 Quarry Road", city="Albany", region="NJ"),
        Address(address="43 Quarry Road", postal_code="12207"),
    ],
)
def test_an_address_with_another_postal_code_region_or_street_is_a_mismatch(claimed: Address) -> None:
    # Given an identity at 42 Quarry Road, Albany NY 12207
    record = identity()

    # When another postal code, region or street is claimed
    result = match(Claimed(addresses=(claimed,)), record)

    # Then the address is mismatched
    assert result.mismatched == {Element.ADDRESS}


def test_one_matching_address_among_several_is_enough() -> None:
    # Given an identity at 42 Quarry Road, Albany NY 12207
    record = identity()

    # When an old address and the current one are claimed
    old = Address(address="1 Elsewhere Street", city="Troy", region="NY", postal_code="12180")
    current = Address(address="42 Quarry Road", postal_code="12207")
    result = match(Claimed(addresses=(old, current)), record)

    # Then the address matches
    assert result.matched == {Element.ADDRESS}


def test_elements_not_supplied_are_neither_matched_nor_mismatched() -> None:
    # Given an identity
    record = identity()

    # When nothing is claimed
    nothing = match(Claimed(), record)
    # And when only the SSN's last four are claimed
    ssn_only = match(Claimed(ssn="6789"), record)

    # Then nothing is matched or mismatched, except the element supplied
    assert (nothing.matched, nothing.mismatched) == (frozenset(), frozenset())
    assert ssn_only.matched == {Element.SSN}
    assert ssn_only.mismatched == frozenset()


def test_all_four_elements_are_judged_independently() -> None:
    # Given an identity
    record = identity()

    # When name and dob are right, but SSN and address are wrong
    result = match(
        Claimed(
            first_name="Noor",
            last_name="Haddad",
            dob="1987-06-15",
            ssn="000000000",
            addresses=(Address(address="42 Quarry Road", postal_code="99999"),),
        ),
        record,
    )

    # Then each element lands on its own side
    assert result.matched == {Element.NAME, Element.DOB}
    assert result.mismatched == {Element.SSN, Element.ADDRESS}
