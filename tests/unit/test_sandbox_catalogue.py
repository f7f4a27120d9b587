"""The Sandbox test users: one per scenario, valid and unique numbers, selection errors."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from phoneid.domain.clients import Solution
from phoneid.domain.errors import SandboxAccessDenied, SandboxUserNotFound
from phoneid.domain.phone import parse_phone
from phoneid.domain.sandbox import Catalogue, Scenario
from tests.unit.helpers import caller


def raw_users() -> list[dict[str, Any]]:
    """The shipped data file as written (the catalogue would hide duplicate numbers)."""
    text = resources.files("phoneid").joinpath("data/sandbox_users.json").read_text("utf-8")
    users: list[dict[str, Any]] = json.loads(text)["users"]
    return users


@pytest.mark.parametrize("scenario", list(Scenario))
def test_every_scenario_has_a_us_test_user(scenario: Scenario) -> None:
    # Given the US catalogue
    catalogue = Catalogue.load("US")

    # When its users are listed
    scenarios = {user.scenario for user in catalogue}

    # Then the scenario is among them
    assert scenario in scenarios


def test_each_test_users_number_is_valid_e164_of_its_region() -> None:
    # Given every test user of every region
    for user in Catalogue.load():
        # When the number is parsed on its region's stack
        phone = parse_phone(user.phone_number, user.region)

        # Then it is already in E.164 form and served by that region
        assert phone.e164 == user.phone_number, user.scenario
        assert phone.region == user.region, user.scenario


def test_test_users_numbers_are_unique() -> None:
    # Given the data file
    numbers = [user["phoneNumber"] for user in raw_users()]

    # When numbers are counted
    # Then none repeats
    assert len(numbers) == len(set(numbers))


def test_each_region_loads_only_its_users() -> None:
    # Given the US and EU catalogues
    # When loaded
    # Then each holds its own region's users only, together all of them
    us, eu = list(Catalogue.load("US")), list(Catalogue.load("EU"))
    assert {u.region for u in us} == {"US"}
    assert {u.region for u in eu} == {"EU"}
    assert len(us) + len(eu) == len(raw_users())


def test_select_finds_the_test_user_of_a_number() -> None:
    # Given the US catalogue
    catalogue = Catalogue.load("US")

    # When the token-only number is selected by an identity caller
    user = catalogue.select("+12025550111", caller())

    # Then the token-only user is returned, passing possession without a client
    assert user.scenario == Scenario.TOKEN_ONLY
    assert user.possession_without_client


@pytest.mark.parametrize("number", ["+12025550199", None, "", "+353855550121"])
def test_select_of_no_test_user_is_8007(number: str | None) -> None:
    # Given the US catalogue
    catalogue = Catalogue.load("US")

    # When a number of no US test user (or none) is selected
    with pytest.raises(SandboxUserNotFound) as raised:
        catalogue.select(number, caller())

    # Then it is 8007
    assert raised.value.code == 8007


def test_select_by_a_caller_of_another_solution_is_8009() -> None:
    # Given the US catalogue
    catalogue = Catalogue.load("US")

    # When the identity user is selected by verified-user credentials, and the reverse
    with pytest.raises(SandboxAccessDenied) as identity_user:
        catalogue.select("+12025550101", caller(solution=Solution.VERIFIED_USER))
    with pytest.raises(SandboxAccessDenied) as verified_user:
        catalogue.select("+12025550110", caller(solution=Solution.IDENTITY))

    # Then both are 8009 / 403
    for raised in (identity_user, verified_user):
        assert (raised.value.code, raised.value.http_status) == (8009, 403)


def test_select_by_a_caller_of_the_same_solution_succeeds() -> None:
    # Given the verified-user test user
    catalogue = Catalogue.load("US")

    # When selected by verified-user credentials
    user = catalogue.select("+12025550110", caller(solution=Solution.VERIFIED_USER))

    # Then it is returned
    assert user.scenario == Scenario.VERIFIED_USER_FAIL
