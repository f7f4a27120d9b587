"""Whose AWS calls these are: the recorder of the IAM check (phoneid_dev.access.recording) attributes
each call to the function it is made for, on the thread that runs the handler and on the pool
threads the handler hands work to."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from phoneid.services.pools import submit_in_context
from phoneid_dev.access import recording
from phoneid_dev.access.check import Check, Records
from phoneid_dev.access.policies import Roles
from phoneid_dev.template import template
from tests.device import Device, latest_code
from tests.harness import Api
from tests.sandbox_numbers import OTP_PASS

Recorded = Callable[[], list[dict[str, Any]]]


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[Recorded]:
    """What this test's functions called, as the recorder wrote it."""

    def read() -> list[dict[str, Any]]:
        return [
            json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()
        ]

    with recording.recording_to(tmp_path):
        yield read


def calls_of(records: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(function, action, resource) of each recorded request."""
    return {
        (record["function"], request["action"], request["resource"].rsplit(":", 1)[-1])
        for record in records
        if record["kind"] == "call"
        for request in record["requests"]
    }


def test_a_handlers_calls_are_its_functions_and_the_tests_own_are_not(recorded: Recorded, api: Api) -> None:
    # Given a client the test made itself (its calls are the harness's), on a stack recorded from its
    # start (the recorder hears the clients made after it)
    integrator = api.integrator()
    before = len(recorded())

    # When the client asks for a token
    assert integrator.access_token

    # Then only the token function's calls are recorded, named for it and for this test
    records = recorded()[before:]
    assert calls_of(records) >= {
        ("TokenFunction", "dynamodb:GetItem", "table/phoneid-local-ClientsTable"),
        ("TokenFunction", "dynamodb:PutItem", "table/phoneid-local-RefreshTokensTable"),
    }
    assert {record["function"] for record in records if record["kind"] == "call"} == {"TokenFunction"}
    assert all(
        record["test"].endswith("::test_a_handlers_calls_are_its_functions_and_the_tests_own_are_not")
        for record in records
        if record["kind"] == "call"
    )


def test_a_call_made_on_a_pool_thread_is_the_functions_that_handed_it_over(
    make_api: Callable[..., Api], recorded: Recorded
) -> None:
    # Given a production stack, whose fraud policy asks its signal sources on a shared thread pool
    api = make_api(tier="production")
    integrator = api.integrator()

    # When a client verifies a number
    answer = integrator.post(
        "/v3/verify",
        {
            "phoneNumber": "+12025550142",
            "verificationType": "verifiedUser",
            "firstName": "Noor",
            "lastName": "Haddad",
        },
    )

    # Then the sources' reads, made on the pool's threads, are the verify function's
    assert answer.status in (200, 404), answer.body
    records = recorded()
    assert ("VerifyFunction", "dynamodb:BatchGetItem", "table/phoneid-local-SignalListsTable") in calls_of(
        records
    )
    assert [record for record in records if record["kind"] == "unattributed"] == []


def test_a_functions_call_on_a_thread_that_lost_its_context_fails_the_check(
    api: Api, recorded: Recorded
) -> None:
    # Given a function handing a read to a pool thread without its context, and another with it
    with ThreadPoolExecutor(1) as pool, recording.invoked(api.stack, "ClientSessionFunction"):
        submit_in_context(pool, api.container.clients.get, "with-context").result()
        pool.submit(api.container.clients.get, "without-context").result()

    # Then the first is the function's, the second nobody's: recorded as such, and the check fails on it
    records = recorded()
    assert calls_of(records) == {
        ("ClientSessionFunction", "dynamodb:GetItem", "table/phoneid-local-ClientsTable")
    }
    [lost] = [record for record in records if record["kind"] == "unattributed"]
    assert lost["operation"] == "GetItem"
    assert lost["where"].startswith("layers/core/phoneid/adapters/dynamodb/")
    run = Records()
    for record in records:
        run.add(record)
    report = Check(Roles(template()), run).run(judge_unused=False)
    assert not report.ok
    assert "no function could be found for: dynamodb.GetItem" in report.text()


@pytest.mark.parametrize("cold", [False, True])
def test_on_new_instances_each_function_makes_the_calls_another_made_for_it_in_a_shared_one(
    api: Api, recorded: Recorded, cold: bool
) -> None:
    # Given a flow whose customer is sent a code (the sender derives the code MAC key from KMS)
    api.stack.cold_starts = cold
    integrator = api.integrator()
    started = integrator.start(phoneNumber=OTP_PASS).json()
    device = Device(api, started["authToken"])
    assert device.send_otp().status == 200

    # When the customer enters it
    assert device.enter(latest_code(api, OTP_PASS)).json()["status"] == "passed"

    # Then the code's check derives the key itself only on an instance of its own, as on Lambda
    derived = ("ClientOtpVerifyFunction", "kms:GenerateMac") in {(f, a) for f, a, _ in calls_of(recorded())}
    assert derived is cold
