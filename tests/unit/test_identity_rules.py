"""Which dates of birth and SSNs can exist: the one rule every model that takes them uses."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest

from phoneid.domain.identity import (
    DOB_PATTERN,
    FULL_DOB_PATTERN,
    FULL_SSN_PATTERN,
    SSN_PATTERN,
    SSN_RULE,
    dob_problem,
    ssn_problem,
)
from phoneid.services.identities import IdentityImport
from tests.fakes import InMemoryIdentityStore
from tests.unit.helpers import identity_record

TODAY = date(2026, 11, 22)
ARABIC_INDIC_YEAR = "\u0661\u0669\u0669\u0669-01-01"  # digits, but not ASCII ones


@pytest.mark.parametrize("dob", ["1987-06-15", "2026-11-22", "2026-11", "2000-02-29", "12-31", "02-29"])
def test_a_date_of_birth_up_to_today_is_possible(dob: str) -> None:
    # Given today is 2026-11-22
    # When a date up to today (or a month and day, which names no year) is checked
    # Then nothing is wrong with it
    assert dob_problem(dob, TODAY) is None


@pytest.mark.parametrize("dob", ["2026-11-23", "2026-12", "2027-01-01", "2999-01-01"])
def test_a_date_of_birth_after_today_is_refused(dob: str) -> None:
    # Given today is 2026-11-22
    # When a later date, or a later month, is checked
    # Then it is in the future, and the rule says so without the value
    assert dob_problem(dob, TODAY) == "must not be in the future"


@pytest.mark.parametrize(
    "dob", ["00-25", "13-01", "04-31", "1999-02-29", "1899-12-31", "0000-01-01", ARABIC_INDIC_YEAR]
)
def test_a_date_that_does_not_exist_or_is_before_1900_is_refused(dob: str) -> None:
    problem = dob_problem(dob, TODAY)
    assert problem is not None
    assert dob not in problem


def test_the_full_form_takes_only_year_month_and_day() -> None:
    assert dob_problem("1987-06-15", TODAY, full=True) is None
    assert dob_problem("1987-06", TODAY, full=True) == "must be an existing date from 1900 as YYYY-MM-DD"
    assert dob_problem("06-15", TODAY, full=True) is not None


@pytest.mark.parametrize(
    "ssn", ["123456789", "123-45-6789", "001010001", "665999999", "667010001", "6789", "0001"]
)
def test_an_ssn_that_can_be_issued_is_possible(ssn: str) -> None:
    assert ssn_problem(ssn) is None


def test_area_numbers_from_900_stay_accepted() -> None:
    # ITINs (9xx) go in the SSN field for people without an SSN (docs/api.md#dates-of-birth-and-ssns)
    assert ssn_problem("911456711") is None
    assert ssn_problem("911-45-6711", full=True) is None


@pytest.mark.parametrize(
    "ssn",
    [
        "000456789",
        "000-45-6789",
        "666456789",
        "123006789",
        "123-00-6789",
        "123450000",
        "0000",
        "12345",
        "\u0661\u0662\u0663\u0664",
    ],
)
def test_an_ssn_that_is_never_issued_is_refused_without_its_digits(ssn: str) -> None:
    # The answer is the rule, the same whatever the digits: it never carries them
    assert ssn_problem(ssn) == SSN_RULE


def test_the_full_form_refuses_a_last_four() -> None:
    assert ssn_problem("6789", full=True) == (
        "must be 9 digits or 123-45-6789, of a number that can be issued "
        "(area not 000 or 666, group not 00, serial not 0000)"
    )


def test_each_area_group_and_serial_is_what_the_pattern_says() -> None:
    # Every area, group and serial against the rule stated in numbers, not in a regular expression
    for area in range(1000):
        value = f"{area:03d}{(area % 99) + 1:02d}{(area * 7) % 10000:04d}"
        issued = area not in (0, 666) and (area * 7) % 10000 != 0
        assert bool(re.fullmatch(FULL_SSN_PATTERN, value)) is issued, value
        assert (ssn_problem(value) is None) is issued, value
    for group in range(100):
        assert (ssn_problem(f"123{group:02d}6789", full=True) is None) is (group != 0)
    for serial in range(10000):
        assert bool(re.fullmatch(SSN_PATTERN, f"{serial:04d}")) is (serial != 0)


def test_every_month_and_day_of_a_leap_year_is_what_the_pattern_says() -> None:
    for month in range(0, 14):
        for day in range(0, 33):
            try:
                exists = date(2000, month, day) is not None
            except ValueError:
                exists = False
            assert bool(re.fullmatch(DOB_PATTERN, f"{month:02d}-{day:02d}")) is exists
            assert bool(re.fullmatch(FULL_DOB_PATTERN, f"2000-{month:02d}-{day:02d}")) is exists


@pytest.mark.parametrize(
    ("field", "value"), [("dob", "2999-01-01"), ("ssn", "666456789"), ("ssn", "123-45-0000")]
)
def test_the_identity_import_rejects_a_future_dob_or_a_never_issued_ssn(field: str, value: str) -> None:
    # Given a record whose date of birth is in the future, or whose SSN is never issued
    store = InMemoryIdentityStore()
    text = json.dumps(identity_record(**{field: value})) + "\n"

    # When imported
    report = IdentityImport(store, "US").run(text, "jsonl")

    # Then nothing is stored, and the rejection names the field only
    assert store.items == {}
    assert report.rejected == [(1, f"invalid fields: {field}")]
