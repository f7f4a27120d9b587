"""Operator tasks on API clients: the secret is shown once and stored only as a hash."""

from __future__ import annotations

from dataclasses import astuple

import pytest

from phoneid.domain.clients import ALL_COUNTRIES, DEFAULT_FLAGS, Flag, Solution
from phoneid.domain.credentials import verify_secret
from phoneid.domain.phone import Region
from phoneid.services.clients import ClientAdmin, InvalidClientSpec
from tests.fakes import FakeClock, InMemoryClientStore


def admin(region: Region = "US") -> tuple[ClientAdmin, InMemoryClientStore, FakeClock]:
    store, clock = InMemoryClientStore(), FakeClock()
    return ClientAdmin(store, clock, "sandbox", region), store, clock


def test_the_secret_is_returned_once_and_only_its_hash_is_stored() -> None:
    # Given the operator's client admin
    clients, store, _ = admin()

    # When a client is created
    new = clients.create(name="Acme")

    # Then the secret comes back, and the stored client holds only a hash that verifies it
    stored = store.get(new.client.client_id)
    assert stored is not None
    assert new.client_secret
    assert new.client_secret not in repr(astuple(stored))
    assert verify_secret(new.client_secret, stored.secret_hash)


def test_a_new_client_gets_the_stack_defaults() -> None:
    # Given the US Sandbox admin
    clients, _, clock = admin()

    # When a client is created with no options
    client = clients.create().client

    # Then it is an enabled identity client of this stack, for every country, with the default flags
    assert (client.tier, client.region, client.solution) == ("sandbox", "US", Solution.IDENTITY)
    assert client.allowed_countries == {ALL_COUNTRIES}
    assert client.flags == DEFAULT_FLAGS == {Flag.AUTO_ENROLLMENT}
    assert client.enabled
    assert client.created_at == clock.now()
    assert client.public_api_key.startswith("pk_")


def test_two_clients_get_distinct_ids_and_secrets() -> None:
    # Given the admin
    clients, store, _ = admin()

    # When two clients are created
    first, second = clients.create(), clients.create()

    # Then ids and secrets differ and both are listed
    assert first.client.client_id != second.client.client_id
    assert first.client_secret != second.client_secret
    assert {c.client_id for c in clients.list()} == {first.client.client_id, second.client.client_id}
    assert len(store.items) == 2


def test_a_chosen_secret_is_kept_when_long_enough_and_refused_when_short() -> None:
    # Given the admin
    clients, _, _ = admin()

    # When a client is created with a 32-character secret, and another with 31
    kept = clients.create(client_secret="s" * 32)

    # Then the first is accepted, the second refused
    assert kept.client_secret == "s" * 32
    with pytest.raises(InvalidClientSpec, match="at least 32 characters"):
        clients.create(client_secret="s" * 31)


@pytest.mark.parametrize(
    ("region", "countries"),
    [("US", ["FR"]), ("US", ["US", "GB"]), ("EU", ["US"]), ("EU", ["IE", "CA"]), ("US", []), ("US", [" "])],
)
def test_countries_outside_the_region_are_refused(region: Region, countries: list[str]) -> None:
    # Given the admin of a region
    clients, store, _ = admin(region)

    # When a client is created for a country served by the other region (or for none)
    with pytest.raises(InvalidClientSpec):
        clients.create(countries=countries)

    # Then nothing is stored
    assert store.items == {}


@pytest.mark.parametrize(
    ("region", "countries", "allowed"),
    [("US", ["us", " ca "], {"US", "CA"}), ("EU", ["IE", "gb"], {"IE", "GB"}), ("EU", ["*"], {"*"})],
)
def test_countries_of_the_region_are_normalised(
    region: Region, countries: list[str], allowed: set[str]
) -> None:
    # Given the admin of a region
    clients, _, _ = admin(region)

    # When a client is created for countries of that region, in any case
    client = clients.create(countries=countries).client

    # Then they are stored as upper-case ISO codes
    assert client.allowed_countries == allowed


def test_flags_are_set_as_given() -> None:
    # Given the admin
    clients, _, _ = admin()

    # When a client is created with chosen flags (by enum or by value)
    client = clients.create(flags=[Flag.KEY_PERSISTENCE, "phone-number-change"]).client  # type: ignore[list-item]

    # Then exactly those flags are set
    assert client.flags == {Flag.KEY_PERSISTENCE, Flag.PHONE_NUMBER_CHANGE}


def test_disabling_a_client_is_stored() -> None:
    # Given a client
    clients, store, _ = admin()
    client_id = clients.create().client.client_id

    # When the operator disables it
    clients.set_enabled(client_id, False)

    # Then the stored client is disabled
    stored = store.get(client_id)
    assert stored is not None
    assert not stored.enabled


def test_disabling_an_unknown_client_is_refused() -> None:
    # Given no client
    clients, _, _ = admin()

    # When the operator disables an unknown id
    # Then it is refused
    with pytest.raises(InvalidClientSpec):
        clients.set_enabled("nobody", False)


@pytest.mark.parametrize("client_id", ["a#b", "", "x" * 65, "name with space", "ü"])
def test_a_chosen_client_id_outside_letters_digits_dash_and_underscore_is_refused(client_id: str) -> None:
    # Keys are "{clientId}#...": "a#b" would share keys with client "a"
    clients, store, _ = admin()

    with pytest.raises(InvalidClientSpec, match="a client id is 1 to 64 letters, digits, '-' or '_'"):
        clients.create(client_id=client_id)

    assert store.list() == []


def test_a_chosen_client_id_of_letters_digits_dash_and_underscore_is_kept() -> None:
    clients, _, _ = admin()

    assert clients.create(client_id="Acme_EU-2").client.client_id == "Acme_EU-2"
