"""Faults, not only bad input: every AWS call of every route's happy path, made to fail once.

Each REST route of the template (``phoneid_dev.template.template().routes``) has a scenario in
``tests/fault_scenarios.py``: a fresh Sandbox stack on moto, the flow walked up to the request, then
the request itself. ``CALLS`` lists the botocore calls that request makes, in order, read from
docs/performance.md ("AWS calls per request", which says why each is made);
``test_each_route_makes_the_calls_listed`` fails, naming the route, when the code and that section
differ.

Then, per (route, call index, fault), the call fails once and the suite checks what a caller sees:

1. the answer is the route's success or the documented 8000 (500, a reference in the message; when
   the authorizer's own read failed, the template's DEFAULT_5XX 8000), never a bare exception
   (API Gateway's 502);
2. the same request, sent again, succeeds, or, for a step that runs once (``Scenario.once``), gives
   its documented replay answer (403/8003; 403/8008 for the Mobile Auth callback; the 410 page for
   an Instant Link);
3. no SMS went out twice, and the SMS budget and the flow's own send count counted exactly the
   texts that went out (a text counted and then not sent is given back);
4. no device key is half bound: every active key in the DeviceKeys table has its binding.

Where the fault is injected (see ``tests/faults.py``):

- ``api``: ``BaseClient._make_api_call`` raises, above botocore's retries: what the code sees when
  the retries ran out. Every call of every route gets one fault kind, cycling through throttling,
  5xx and timeout by call index; the three kinds on every call of ``/v3/complete``,
  ``/v3/unify-status`` and ``/client/v1/otp`` (a staged step, a key binding, an SMS).
- ``http``: one HTTP attempt fails inside botocore's retry loop; the standard retry mode absorbs
  it, so the caller sees the plain success. One case per route (its last call, usually the write),
  with the fault kind cycling by route.

About 230 fault cases; each builds its own stack (two to six minutes with ``-n 2`` on a shared
two-CPU machine).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from phoneid.domain.possession import MAX_SENDS
from phoneid_dev.gateway import HttpResponse
from phoneid_dev.template import template
from tests.fault_scenarios import SCENARIOS, Scenario
from tests.faults import Fault, Injector, Layer, installed
from tests.harness import Api

# The botocore calls each route's happy path makes, in order (service.Operation), as docs/performance.md
# lists them: the document is the table this suite holds the code to.
_PERFORMANCE_DOC = Path(__file__).resolve().parents[2] / "docs" / "performance.md"
_LISTED_CALL = re.compile(r"^\d+\. `([\w-]+\.\w+)`", re.MULTILINE)


def documented_calls() -> dict[str, tuple[str, ...]]:
    """Per route's function, its calls: the authorizer's two (the section's introduction lists them
    once) for routes behind one, then the route's own."""
    section = _PERFORMANCE_DOC.read_text().split("\n## AWS calls per request\n", 1)[1].split("\n## ", 1)[0]
    introduction, *blocks = re.split(r"^### ", section, flags=re.MULTILINE)
    authorized = tuple(_LISTED_CALL.findall(introduction))
    routes = {f"{route.method} {route.path}": route for route in template().routes}
    calls = {}
    for block in blocks:
        heading, _, body = block.partition("\n")
        named = re.fullmatch(r"`([A-Z]+ \S+)`", heading.strip())
        if named is None:
            continue  # prose, not a route
        route = routes[named.group(1)]
        calls[route.function] = (authorized if route.authorizer else ()) + tuple(_LISTED_CALL.findall(body))
    return calls


CALLS = documented_calls()

# Routes behind a Lambda authorizer: their first call is the authorizer's read of the client.
_AUTHORIZED = {route.function for route in template().routes if route.authorizer is not None}
_SMS = ("ClientOtpFunction", "ClientInstantLinkFunction")
_KINDS = (Fault.THROTTLE, Fault.SERVER, Fault.TIMEOUT)
# Every fault kind on every call of these: a staged step, a key binding, an SMS.
_ALL_KINDS = ("CompleteFunction", "UnifyStatusFunction", "ClientOtpFunction")


def _cases() -> Iterator[Any]:
    for route_number, (function, calls) in enumerate(CALLS.items()):
        for index, call in enumerate(calls):
            kinds = _KINDS if function in _ALL_KINDS else (_KINDS[index % len(_KINDS)],)
            for kind in kinds:
                yield _case(function, index, call, kind, Layer.API)
        if calls:
            kind = _KINDS[route_number % len(_KINDS)]
            yield _case(function, len(calls) - 1, calls[-1], kind, Layer.HTTP)


def _case(function: str, index: int, call: str, kind: Fault, layer: Layer) -> Any:
    return pytest.param(
        function, index, kind, layer, id=f"{function}-{index}-{call}-{kind.value}-{layer.value}"
    )


@pytest.fixture
def injector(monkeypatch: pytest.MonkeyPatch) -> Iterator[Injector]:
    with installed(monkeypatch) as running:
        yield running


def test_every_rest_route_has_a_scenario() -> None:
    assert sorted(route.function for route in template().routes) == sorted(SCENARIOS)
    assert sorted(CALLS) == sorted(SCENARIOS)


@pytest.mark.parametrize("function", list(SCENARIOS))
def test_each_route_makes_the_calls_listed(
    make_api: Callable[..., Api], injector: Injector, function: str
) -> None:
    scenario = SCENARIOS[function](make_api)

    with injector.record() as calls:
        answer = scenario.send()

    assert answer.status == scenario.ok, answer.body
    recorded = tuple(str(call) for call in calls)
    assert recorded == CALLS[function], recorded


@pytest.mark.parametrize(("function", "index", "fault", "layer"), list(_cases()))
def test_a_failed_aws_call_leaves_a_retryable_request(
    make_api: Callable[..., Api], injector: Injector, function: str, index: int, fault: Fault, layer: Layer
) -> None:
    # Given the flow walked up to the route's request
    scenario = SCENARIOS[function](make_api)
    api = scenario.api
    texts_before = _texts(api, scenario.phone)
    budget_before = _sms_budget_spent(api)

    # When one of its AWS calls fails once, and the caller then sends the same request again
    with injector.failing(index, fault, layer):
        first = scenario.send()
    assert injector.injected is not None
    assert str(injector.injected) == CALLS[function][index]
    again = scenario.send()

    # Then the first answer is the success or the documented 8000, never a bare exception
    if layer is Layer.HTTP:
        assert first.status == scenario.ok, first.body  # botocore's own retry absorbed the fault
        assert injector.slept, "the retry backs off"
    else:
        assert first.status in (scenario.ok, 500), (first.status, first.body)
        if first.status == 500 and index == 0 and function in _AUTHORIZED:
            # The authorizer failed: API Gateway's DEFAULT_5XX response of the template.
            body = first.json()
            assert body["code"] == 8000, body
            assert re.fullmatch(
                r"Internal error; retry the request \(reference [0-9a-f-]{36}\)", body["message"]
            )
        elif first.status == 500:
            _assert_internal_error(first)
    # and the request sent again succeeds, or is the documented replay of a step that runs once
    if scenario.once and first.status == scenario.ok:
        assert _replay(scenario, again), (again.status, again.body)
    elif scenario.once and _replay(scenario, again):
        pass  # the failed attempt had done the step; its replay answer says so
    else:
        assert again.status == scenario.ok, (again.status, again.body)
    # and every text went out once per success, the SMS budget counting exactly those
    successes = sum(answer.status == scenario.ok for answer in (first, again))
    sent = _texts(api, scenario.phone) - texts_before
    if scenario.phone is not None and scenario.texts:
        assert sent == scenario.texts * successes, f"{sent} texts for {successes} successes"
    assert _sms_budget_spent(api) - budget_before == sent
    # and the flow counted those texts only: its sends left are what one clean send leaves
    if scenario.texts and again.status == scenario.ok:
        method = "otp" if again.json().get("otp") else "instantLink"
        assert again.json()[method]["sendsLeft"] == MAX_SENDS - sent, again.body
    # and no device key is half bound: a binding flow's key is in the table exactly when it succeeded
    if scenario.binds:
        bound = [answer.json()["deviceId"] for answer in (first, again) if answer.status == scenario.ok]
        assert _device_ids(api) == set(bound), (_device_ids(api), bound)


def _assert_internal_error(answer: HttpResponse) -> None:
    assert answer.status == 500, answer.body
    body = answer.json()
    assert body["code"] == 8000, body
    assert re.search(r"\(reference [0-9a-f]{12}\)$", body["message"]), body


def _replay(scenario: Scenario, answer: HttpResponse) -> bool:
    status, code = scenario.replay
    if answer.status != status:
        return False
    return code is None or answer.json().get("code") == code


def _texts(api: Api, phone: str | None) -> int:
    return len(api.outbox(phone)) if phone else len(api.outbox())


def _sms_budget_spent(api: Api) -> int:
    """Texts the per-number hourly SMS budget has counted, over every number."""
    return sum(
        int(item["hits"]["N"])
        for item in api.table_items("RateLimitsTable")
        if item["pk"]["S"].startswith("sms-number:")
    )


def _device_ids(api: Api) -> set[str]:
    return {item["deviceId"]["S"] for item in api.table_items("DeviceKeysTable")}
