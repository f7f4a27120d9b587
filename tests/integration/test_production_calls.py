"""The identity calls of a production stack: what ``challenge``, ``complete`` and ``verify`` make
against real identity records and the fraud policy's signal sources, counted per operation (the
sources are asked in parallel, so their order is not fixed), as docs/performance.md lists them."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from phoneid_dev.template import template
from tests.device import Device, latest_code
from tests.faults import Injector, installed
from tests.harness import Api
from tests.unit.helpers import identity_record

CUSTOMER = "+12025550142"
_PERFORMANCE_DOC = Path(__file__).resolve().parents[2] / "docs" / "performance.md"
_ROW = re.compile(r"^\| `([A-Z]+ \S+)` \| `([\w-]+\.\w+)` \| (\d+) \|", re.MULTILINE)


def documented() -> dict[str, Counter[str]]:
    """Per route's function, its calls after the authorizer's two, from the production section."""
    text = _PERFORMANCE_DOC.read_text()
    section = text.split("\n### On the production tier\n", 1)[1].split("\n## ", 1)[0]
    functions = {f"{route.method} {route.path}": route.function for route in template().routes}
    calls: dict[str, Counter[str]] = {}
    for route, call, times in _ROW.findall(section):
        calls.setdefault(functions[route], Counter())[call] += int(times)
    return calls


@pytest.fixture
def injector(monkeypatch: pytest.MonkeyPatch) -> Iterator[Injector]:
    with installed(monkeypatch) as running:
        yield running


def test_challenge_complete_and_verify_make_the_calls_listed(
    make_api: Callable[..., Api], injector: Injector
) -> None:
    # Given a production stack holding the customer's identity record, and a flow past possession
    api = make_api(tier="production")
    report = api.container.identity_import.run(json.dumps(identity_record(CUSTOMER)) + "\n", "jsonl")
    assert report.imported == 1
    integrator = api.integrator()
    started = integrator.start(phoneNumber=CUSTOMER).json()
    device = Device(api, started["authToken"])
    assert device.send_otp().status == 200
    assert device.enter(latest_code(api, CUSTOMER)).status == 200
    correlation = {"correlationId": started["correlationId"]}
    assert integrator.post("/v3/validate", correlation).json()["success"] is True
    name = {"firstName": "Noor", "lastName": "Haddad"}
    individual = {**name, "ssn": "123456789"}
    verify = {"phoneNumber": CUSTOMER, "verificationType": "verifiedUser", **name}
    recorded: dict[str, Counter[str]] = {}

    # When the identity steps are called, each recorded
    for function, path, body in (
        ("ChallengeFunction", "/v3/challenge", {**correlation, "dob": "1987-06-15"}),
        ("CompleteFunction", "/v3/complete", {**correlation, "individual": individual}),
        ("VerifyFunction", "/v3/verify", verify),
    ):
        with injector.record() as calls:
            answer = integrator.post(path, body)
        assert answer.status == 200, answer.body
        recorded[function] = Counter(str(call) for call in calls[2:])  # after the authorizer's two

    # Then each made the calls the document lists, no more and no fewer
    assert recorded == documented()
