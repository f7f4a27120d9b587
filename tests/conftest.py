from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from phoneid.dev.emulation import FAKE_CREDENTIALS

# Before anything imports boto3 or Powertools: no real AWS, no X-Ray, no metric noise.
for _name, _value in {
    **FAKE_CREDENTIALS,
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_SERVICE_NAME": "phoneid",
    "POWERTOOLS_METRICS_NAMESPACE": "PhoneID",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}.items():
    os.environ[_name] = _value
os.environ.pop("AWS_ENDPOINT_URL", None)

from moto import mock_aws  # noqa: E402

from phoneid import bootstrap  # noqa: E402
from phoneid.dev.emulation import atomic_dynamodb_writes  # noqa: E402
from phoneid.dev.stack import LocalStack  # noqa: E402
from tests.fakes import FakeClock  # noqa: E402
from tests.harness import Api  # noqa: E402


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_api(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> Iterator[Callable[..., Api]]:
    """Build the stack of one tier and region on moto: ``api = make_api(tier="production", region="EU")``."""
    atomic_dynamodb_writes()
    with mock_aws():

        def build(tier: str = "sandbox", region: str = "US") -> Api:
            stack = LocalStack(parameters={"Tier": tier, "Region": region, "LogLevel": "WARNING"}).provision()
            for name, value in stack.environment().items():
                monkeypatch.setenv(name, value)
            bootstrap.reset()
            bootstrap.override(clock=clock)
            return Api(stack, clock)

        yield build
    bootstrap.reset()


@pytest.fixture
def api(make_api: Callable[..., Api]) -> Api:
    """The default stack: Sandbox tier, US region."""
    return make_api()
