"""AWS calls per unit of work, held to the budgets docs/performance.md keeps ("AWS calls per unit of
work"), as ``test_faults.py`` holds each request to its calls: counts, never timings.

Each unit runs on moto with the bench's mix (bench/connect_bench/generate.py's rows, the monitor
bench's identities) and its calls are counted per ``service.Operation``:

- Connect's chunk task, per 1,000 rows: a chunk of the bench's file, every number's roster already
  full, as in the bench's large files after their first chunks;
- the monitor's pass, per 1,000 identities: its plan, every segment's task and its summary;
- ``POST /v3/identity/batch`` and ``POST /v3/verify/batch``, per item: 100 items of the bench's rows.

Each table's "Measured" column must be what the code makes, to the figure shown (the document does
not drift), and each figure within its "Budget" (what a change may not exceed without a reason
written beside it: docs/adr/0111-aws-calls-per-unit-of-work-held-to-budgets.md).
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from bench.connect_bench.generate import CLIENT, KIND, generate
from bench.monitor_bench.identities import clients, enroll
from phoneid.api.connect_steps import Accepted
from phoneid.domain.clients import Flag, Solution
from phoneid.domain.enrollment import ROSTER_LIMIT, Enrollment, new_service_id
from phoneid.domain.sandbox import Catalogue
from phoneid_dev.workflows import run_function
from tests.faults import Injector, installed
from tests.harness import Api

_PERFORMANCE_DOC = Path(__file__).resolve().parents[2] / "docs" / "performance.md"
_ROW = re.compile(r"^\| `([\w-]+\.\w+)` \| ([\d.,]+) \| ([\d.,]+) \|", re.MULTILINE)

CONNECT_CHUNK = "Connect's chunk, per 1,000 rows"
MONITOR_PASS = "The monitor's pass, per 1,000 identities"
IDENTITY_BATCH = "`POST /v3/identity/batch`, per item"
VERIFY_BATCH = "`POST /v3/verify/batch`, per item"


def budgets() -> dict[str, dict[str, tuple[str, float]]]:
    """Per unit (its heading), each call's (measured, as written; budget)."""
    section = (
        _PERFORMANCE_DOC.read_text().split("\n## AWS calls per unit of work\n", 1)[1].split("\n## ", 1)[0]
    )
    units = {}
    for block in re.split(r"^### ", section, flags=re.MULTILINE)[1:]:
        heading, _, body = block.partition("\n")
        units[heading.strip()] = {
            call: (measured, float(budget.replace(",", ""))) for call, measured, budget in _ROW.findall(body)
        }
    return units


BUDGETS = budgets()


def figure(count: int, units: int, per: int) -> str:
    """``count`` calls over ``units`` units, per ``per`` of them, as the tables write it."""
    value = count * per / units
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"


def assert_within_budget(unit: str, calls: Counter[str], units: int, per: int) -> None:
    measured = {call: figure(count, units, per) for call, count in sorted(calls.items())}
    table = "\n".join(f"| `{call}` | {value} |" for call, value in measured.items())
    listed = BUDGETS[unit]
    assert measured == {call: written for call, (written, _) in listed.items()}, (
        f"{unit}: the calls differ from docs/performance.md's table; measured:\n{table}"
    )
    over = {
        call: value for call, value in measured.items() if float(value.replace(",", "")) > listed[call][1]
    }
    assert not over, f"{unit}: over budget: {over}"


@pytest.fixture
def injector(monkeypatch: pytest.MonkeyPatch) -> Iterator[Injector]:
    with installed(monkeypatch) as running:
        yield running


def counted(injector: Injector, action: Callable[[], Any]) -> tuple[Any, Counter[str]]:
    with injector.record() as calls:
        result = action()
    return result, Counter(str(call) for call in calls)


def test_every_unit_has_a_budget_table() -> None:
    assert sorted(BUDGETS) == sorted([CONNECT_CHUNK, MONITOR_PASS, IDENTITY_BATCH, VERIFY_BATCH])
    assert all(BUDGETS.values())


# --- Connect's chunk ---------------------------------------------------------------------------------


def _full_rosters(api: Api, client_id: str) -> None:
    """Each US test user's number holds ``ROSTER_LIMIT`` identities of the client, as after the first
    chunks of the bench's large files."""
    store = api.container.enrollment_store
    numbers = sorted(
        {user.phone_number for user in Catalogue.load("US") if user.phone_number.startswith("+1")}
    )
    for number in numbers:
        made = store.enroll_many(
            [
                Enrollment(
                    client_id=client_id,
                    service_id=new_service_id(),
                    phone_number=number,
                    country="US",
                    created_at=api.clock.now(),
                    client_customer_id=f"before-{number}-{n}",
                )
                for n in range(ROSTER_LIMIT)
            ]
        )
        assert all(isinstance(result, tuple) and result[1] for result in made)


def test_connects_chunk_keeps_to_its_budget(api: Api, injector: Injector) -> None:
    # Given a client onboarded for the bench's file, every test user's number with a full roster
    container = api.container
    events = boto3.client("events")
    for rule in events.list_rules()["Rules"]:  # the steps are called here, not by the workflow
        ids = [t["Id"] for t in events.list_targets_by_rule(Rule=rule["Name"])["Targets"]]
        if ids:
            events.remove_targets(Rule=rule["Name"], Ids=ids)
    created = container.client_admin.create(
        solution=Solution.VERIFIED_USER, name=CLIENT, countries=["*"], flags=[Flag.AUTO_ENROLLMENT]
    )
    client_id = created.client.client_id
    _, enroll_key = container.connect_onboarding.onboard(client_id, name=CLIENT, types=[KIND])
    _full_rosters(api, client_id)
    # and 2,500 rows of the bench's file validated into three chunks (1,000 valid rows each, the rest)
    s3 = boto3.client("s3")
    bucket = container.settings.connect_bucket
    with tempfile.TemporaryDirectory() as directory:
        generated = generate(Path(directory), 2_500, enroll_key, stamp="20260301120000")
        key = f"clients/{CLIENT}/upload/{generated.path.name}"
        s3.upload_file(str(generated.path), bucket, key)
    etag = str(s3.head_object(Bucket=bucket, Key=key)["ETag"]).strip('"')
    validated = container.connect.validate.run(bucket, key, etag=etag)
    assert isinstance(validated, Accepted), validated
    manifest = json.loads(s3.get_object(Bucket=bucket, Key=validated.manifest_key)["Body"].read())
    assert len(manifest) == 3
    verify_chunk = container.connect.verify_chunk
    first, second, _ = manifest
    verify_chunk.run(first["batchId"], first["chunk"], first["key"])  # the task's instance warm

    # When the second chunk's task runs
    result, calls = counted(
        injector, lambda: verify_chunk.run(second["batchId"], second["chunk"], second["key"])
    )

    # Then its calls per 1,000 rows are those of the table, within their budgets
    assert result.rows == 1_000
    assert_within_budget(CONNECT_CHUNK, calls, result.rows, 1_000)


# --- the monitor's pass ------------------------------------------------------------------------------


def _invoked(api: Api, function: str, event: dict[str, Any]) -> dict[str, Any]:
    result, error = run_function(api.stack, function, event)
    assert error is None, f"{function} failed: {error}"
    return dict(result)


def test_the_monitors_pass_keeps_to_its_budget(
    api: Api, injector: Injector, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 1,000 active identities of the monitor bench's mix (ten clients, half with a customer id),
    # their serviceIds drawn from a seeded generator: a parallel scan's segments split the table by
    # key, so random ids would move an identity between segments and a page between runs
    seeded = random.Random(20261202)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=seeded.getrandbits(128), version=4))
    enroll(api, clients(api), 0, 1_000)
    pass_id = "2026-03-02T06:00:00Z"

    # When a pass runs its tasks as its workflow runs them: the plan, each segment's task until it is
    # done, the summary
    def one_pass() -> int:
        planned = _invoked(api, "MonitorPlanFunction", {"passId": pass_id})
        for segment in planned["segments"]:
            while not _invoked(api, "WebhookMonitorFunction", {"passId": pass_id, "segment": segment})[
                "done"
            ]:
                pass
        return int(_invoked(api, "MonitorSummaryFunction", {"passId": pass_id})["checked"])

    checked, calls = counted(injector, one_pass)

    # Then its calls per 1,000 identities are those of the table, within their budgets
    assert checked == 1_000
    assert_within_budget(MONITOR_PASS, calls, checked, 1_000)


# --- the batch routes --------------------------------------------------------------------------------


def _bench_rows(count: int) -> list[list[str]]:
    """The first ``count`` rows of the bench's file that are well formed (what a batch item is)."""
    with tempfile.TemporaryDirectory() as directory:
        generated = generate(Path(directory), count * 2, "key", stamp="20260301120000")
        lines = generated.path.read_text().splitlines()[1:-1]
    rows = [line.split(",") for line in lines]
    valid = [
        r for r in rows if r[1].startswith("+1") and len(r[1]) == 12 and r[2] and r[3] and len(r[2]) < 100
    ]
    return valid[:count]


def test_the_identity_batch_keeps_to_its_budget(api: Api, injector: Injector) -> None:
    # Given an integrator, and 100 items of the bench's rows (a customer id on 60 % of them)
    integrator = api.integrator()
    token = integrator.access_token
    items = [
        {"phoneNumber": phone, "firstName": first, "lastName": last}
        | ({"clientCustomerId": customer} if customer else {})
        for _, phone, first, last, customer, *_ in _bench_rows(100)
    ]
    api.container.verification_keys.published()

    # When they are enrolled in one batch
    answer, calls = counted(
        injector, lambda: api.call("POST", "/v3/identity/batch", {"items": items}, token=token)
    )

    # Then the answer is the batch's, and its calls per item those of the table, within their budgets
    assert answer.status == 200, answer.body
    assert len(answer.json()["results"]) == 100
    assert_within_budget(IDENTITY_BATCH, calls, len(items), 1)


def test_the_verify_batch_keeps_to_its_budget(api: Api, injector: Injector) -> None:
    # Given a Verified User integrator enrolling passes, and 100 items of the bench's rows
    integrator = api.integrator(solution=Solution.VERIFIED_USER, flags=[Flag.AUTO_ENROLLMENT])
    token = integrator.access_token
    items = [
        {"phoneNumber": phone, "verificationType": KIND, "firstName": first, "lastName": last}
        | ({"clientCustomerId": customer} if customer else {})
        for _, phone, first, last, customer, *_ in _bench_rows(100)
    ]
    api.container.verification_keys.published()

    # When they are verified in one batch
    answer, calls = counted(
        injector, lambda: api.call("POST", "/v3/verify/batch", {"items": items}, token=token)
    )

    # Then the answer is the batch's, and its calls per item those of the table, within their budgets
    assert answer.status == 200, answer.body
    assert len(answer.json()["results"]) == 100
    assert_within_budget(VERIFY_BATCH, calls, len(items), 1)
