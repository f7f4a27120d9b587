"""The composition root (``phoneid.bootstrap``, wired in ``phoneid.wiring``): an override names a
part or is refused, it is the one instance every part built on it gets, and each table has one store.
In memory: the AWS clients are stand-ins, and nothing here calls them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from phoneid import bootstrap
from phoneid.config import Settings
from tests.fakes import FakeClock, InMemoryDeviceKeyStore

NUMBERS = {
    "KEY_INACTIVITY_DAYS": "90",
    "SMS_PER_NUMBER_PER_HOUR": "5",
    "SMS_PER_CLIENT_PER_HOUR": "500",
    "MONITOR_MAX_SEGMENTS": "256",
    "DECISION_RETENTION_DAYS": "1825",
}
CHOICES = {
    "PHONEID_TIER": "production",
    "PHONEID_REGION": "US",
    "CONNECT_TRANSPORT": "s3",
    "CAMARA_SUBSCRIPTIONS": "sim-swap,reachability,roaming",
}
CLIENTS = ("dynamodb", "kms", "sns", "sqs", "s3", "ses", "lambda_client", "secrets")


@pytest.fixture
def production(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A production stack's settings in the environment, and no container yet."""
    for name in Settings.variable_names():
        placeholder = f"https://{name.lower()}.test" if name.endswith("_URL") else f"test-{name.lower()}"
        monkeypatch.setenv(name, NUMBERS.get(name) or CHOICES.get(name) or placeholder)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    bootstrap.reset()
    yield
    bootstrap.reset()


def test_an_override_of_no_part_is_refused_naming_the_parts_and_changes_nothing(production: None) -> None:
    # Given the process's container
    before = bootstrap.container()

    # When a test overrides a misspelt clock
    with pytest.raises(TypeError) as refused:
        bootstrap.override(clokc=FakeClock())

    # Then it is refused, the misspelt name and the real ones named, and the container is as it was
    said = str(refused.value)
    assert "clokc" in said
    assert "clock" in said.split("its parts:")[1]
    assert "enrollment_store" in said
    assert bootstrap.container() is before
    assert not isinstance(bootstrap.container().clock, FakeClock)


def test_an_overridden_part_is_the_one_the_container_gives(production: None) -> None:
    # Given an in-memory device key store and clock in place of the real ones
    keys, clock = InMemoryDeviceKeyStore(), FakeClock()

    # When the container is asked for them (one overridden after the other: both are kept)
    bootstrap.override(device_keys=keys)
    container = bootstrap.override(clock=clock)

    # Then it gives those very instances
    assert container.device_keys is keys
    assert container.clock is clock


def test_every_dynamodb_table_has_one_store_whatever_parts_are_built_on_it(production: None) -> None:
    # Given a production container whose AWS clients are never called
    stand_ins: dict[str, Any] = {name: object() for name in CLIENTS}
    container = bootstrap.override(**stand_ins)

    # When every part is built
    built = {id(part): part for part in (getattr(container, name) for name in container.parts())}

    # Then each DynamoDB store class was built once: a port shared by two services is one instance
    stores = Counter(
        type(part).__name__
        for part in built.values()
        if type(part).__module__.startswith("phoneid.adapters.dynamodb")
    )
    assert stores
    assert {name: count for name, count in stores.items() if count > 1} == {}
