from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from phoneid_dev.emulation import FAKE_CREDENTIALS

# Before anything imports boto3 or Powertools: no real AWS, no X-Ray, no metric noise.
for _name, _value in {
    **FAKE_CREDENTIALS,
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_SERVICE_NAME": "phoneid",
    "POWERTOOLS_METRICS_NAMESPACE": "PhoneID",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    # awscrt is installed for the SAM CLI (boto3[crt]) but not in the layer: botocore signs and
    # checksums here without it, as on Lambda (docs/adr/0082-boto3-and-botocore-ship-in-the-layer.md).
    "BOTO_DISABLE_CRT": "true",
}.items():
    os.environ[_name] = _value
os.environ.pop("AWS_ENDPOINT_URL", None)

from phoneid_dev.access import recording  # noqa: E402

# Before any boto3 session is made: `make test` records every function's AWS calls for the IAM check.
recording.install_from_environment()

import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

from phoneid import bootstrap  # noqa: E402
from phoneid_dev.emulation import free_port  # noqa: E402
from phoneid_dev.operator import FakeOperator  # noqa: E402
from phoneid_dev.patches import apply_all  # noqa: E402
from phoneid_dev.processes import FunctionProcesses, function_specs  # noqa: E402
from phoneid_dev.stack import LocalStack  # noqa: E402
from tests import stacks  # noqa: E402
from tests.fakes import FakeClock  # noqa: E402
from tests.harness import PUBLIC_BASE_URL, Api, LogRecorder  # noqa: E402

# Every test runs on moto as the local stack runs it: the whole registry of its patches, from the
# start, whichever tests a worker ran before (phoneid_dev.patches).
apply_all()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "overlapping: make_api's stacks run their functions in worker processes, so requests overlap",
    )
    config.addinivalue_line(
        "markers",
        "cold_instances: every function invocation of make_api's stacks is a new Lambda instance, "
        "which shares no cache with another function (what the IAM check must see each function call)",
    )


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """The calls from here on are this test's; its own calls are the harness's, not a function's."""
    found = recording.recorder()
    if found is not None:
        found.test_started(nodeid)
        recording.outside_functions()


def _yaml_tables() -> dict[type, dict[str, dict[Any, Any]]]:
    import yaml

    return {
        cls: {name: dict(cls.__dict__[name]) for name in _YAML_TABLES if name in cls.__dict__}
        for cls in (yaml.SafeLoader, yaml.constructor.SafeConstructor)
    }


_YAML_TABLES = ("yaml_constructors", "yaml_multi_constructors")
_YAML_AS_PUBLISHED = _yaml_tables()


@pytest.fixture(autouse=True)
def yaml_as_published() -> Iterator[None]:
    """PyYAML's safe loader as published in every test: the SAM CLI's YAML parser (which the sam
    local and samconfig tests reach, fixtures included) rewrites it for the whole process (mappings
    as OrderedDict, timestamps as text, CloudFormation tags), which would change what a later test
    parses."""
    yield
    for cls, tables in _YAML_AS_PUBLISHED.items():
        for name in _YAML_TABLES:
            if name in tables:
                setattr(cls, name, dict(tables[name]))
            elif name in cls.__dict__:
                delattr(cls, name)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_api(
    monkeypatch: pytest.MonkeyPatch, clock: FakeClock, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Api]]:
    """Build the stack of one tier and region on moto: ``api = make_api(tier="production", region="EU")``.

    ``operator=FakeOperator().start()`` gives a production stack Mobile Auth through that operator.
    Under the ``cold_instances`` mark, every invocation is a new instance (``LocalStack.cold_starts``).
    Under the ``overlapping`` mark, the functions run in worker processes as ``phoneid dev`` runs
    them, so that requests sent at once overlap in their handlers (in this process, one invocation
    runs at a time); the workers reach this mock through moto's server and follow ``clock``.
    """
    # boto3's default session kept from test to test (moto would make a new one for each): a new
    # session parses every service model again for its first client of each service.
    with mock_aws(config={"core": {"reset_boto3_session": False}}), contextlib.ExitStack() as cleanup:

        def build(
            tier: str = "sandbox",
            region: str = "US",
            operator: FakeOperator | None = None,
            parameters: dict[str, str] | None = None,
        ) -> Api:
            parameters = {
                "Tier": tier,
                "Region": region,
                "LogLevel": "WARNING",
                # A monitor pass over a test's handful of identities in two segments, not the
                # sixteen a deployed stack's plan starts from: each is a child execution. How a pass
                # splits and continues is tested with its own count (test_monitor_workflow.py).
                "MonitorMaxSegments": "2",
                **(parameters or {}),
            }
            overrides = {"PUBLIC_BASE_URL": PUBLIC_BASE_URL}
            cold_starts = request.node.get_closest_marker("cold_instances") is not None
            if operator is None:
                # Provisioned once per worker, restored for each test (tests/stacks.py).
                stack = stacks.provisioned(parameters, overrides, cold_starts=cold_starts)
            else:
                boto3.client("secretsmanager").create_secret(
                    Name="operator", SecretString=operator.secret_string
                )
                parameters |= {
                    "CamaraAuthorizeUrl": operator.settings["CAMARA_AUTHORIZE_URL"],
                    "CamaraTokenUrl": operator.settings["CAMARA_TOKEN_URL"],
                    "CamaraApiUrl": operator.settings["CAMARA_API_URL"],
                    "CamaraCredentialsSecret": "operator",
                    "CamaraNetworkApiUrl": operator.settings["CAMARA_NETWORK_API_URL"],
                }
                # The operator's port is in the parameters: a stack no other test builds.
                stack = LocalStack(
                    parameters=parameters, overrides=overrides, cold_starts=cold_starts
                ).provision()
            for name, value in stack.environment().items():
                monkeypatch.setenv(name, value)
            bootstrap.reset()
            bootstrap.override(clock=clock)
            if request.node.get_closest_marker("overlapping") is not None:
                stack.processes = cleanup.enter_context(worker_processes(stack, clock))
            api = Api(stack, clock)
            api.rotate_token_keys()  # as the schedule has on a deployed stack
            return api

        yield build
    bootstrap.reset()


@contextlib.contextmanager
def worker_processes(stack: LocalStack, clock: FakeClock) -> Iterator[FunctionProcesses]:
    """Every function of ``stack`` in worker processes reaching this process's mock over HTTP."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    processes = FunctionProcesses(
        function_specs(stack.template),
        environment={
            **os.environ,
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            **recording.worker_environment(stack),  # when the functions' calls are recorded
        },
        clock_offset=lambda: (clock.now() - datetime.now(UTC)).total_seconds(),
    )
    try:
        yield processes
    finally:
        processes.stop()
        server.stop()


@pytest.fixture
def operator() -> Iterator[FakeOperator]:
    """A CAMARA operator on loopback that recognises devices by their X-Device-Msisdn header."""
    running = FakeOperator().start()
    yield running
    running.stop()


@pytest.fixture
def api(make_api: Callable[..., Api]) -> Api:
    """The default stack: Sandbox tier, US region."""
    return make_api()


@pytest.fixture
def logged() -> Iterator[LogRecorder]:
    """Everything the service logs, at any level, while the test runs."""
    # The service's Powertools logger first: its handler must be the logger's first, for
    # Powertools formats with the first handler's formatter (the recorder's would have no keys).
    import phoneid.api.http  # noqa: F401

    loggers = [
        logging.getLogger(name)
        for name in list(logging.Logger.manager.loggerDict)
        if name.startswith("phoneid")
    ]
    previous = [each.level for each in loggers]
    recorder = LogRecorder()
    service = logging.getLogger("phoneid")
    service.addHandler(recorder)
    for each in loggers:
        each.setLevel(logging.DEBUG)
    yield recorder
    service.removeHandler(recorder)
    for each, level in zip(loggers, previous, strict=True):
        each.setLevel(level)
