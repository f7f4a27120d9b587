"""moto in this process as the local stack runs it, for the tests of that emulation itself; and two
integrators of Identity Manager, ``alice`` and ``bob``, on the test's stack."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.harness import Api
from tests.identities import Identities


@pytest.fixture
def local_aws() -> Iterator[None]:
    """moto's mock, as the local stack runs it (every registered patch: tests/conftest.py)."""
    with mock_aws():
        yield


@pytest.fixture
def dynamodb(local_aws: None) -> Any:
    """A DynamoDB client, and one table ``t`` keyed by the string ``pk``."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(
        TableName="t",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return client


@pytest.fixture
def alice(api: Api) -> Identities:
    return Identities(api, api.integrator())


@pytest.fixture
def bob(api: Api) -> Identities:
    return Identities(api, api.integrator())
