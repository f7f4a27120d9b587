"""The local stack's console fed by the real gateway on moto (``phoneid_dev.console_page``): the
Sandbox flows a developer runs show with their steps and reason codes, and what the handlers answer
(a date of birth and an SSN at challenge, tokens at /token) stays out of the feed."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from phoneid_dev.console_page.feed import ConsoleFeed
from phoneid_dev.gateway import HttpResponse
from tests.harness import Api, Integrator

SIM_SWAP_USER = "+14045550135"  # Quin Code9135: complete fails with 9135
SIM_SWAP_DOB = "1986-05-17"
TOKEN_ONLY_USER = "+12025550111"  # Kira Petrova: passes with no client SDK
TOKEN_ONLY_DOB = "1999-08-08"


class WatchedApi(Api):
    """The test harness's API with the console's feed watching every answer, as ``phoneid dev``'s
    gateway route feeds it."""

    feed: ConsoleFeed

    def request(
        self,
        method: str,
        path: str,
        body: str | None,
        headers: dict[str, str],
        query: dict[str, str] | None = None,
    ) -> HttpResponse:
        answer = super().request(method, path, body, headers, query)
        self.feed.observe(method, path, headers, body, answer.status, answer.body, 7.0)
        return answer


@pytest.fixture
def api(make_api: Callable[..., Api]) -> WatchedApi:
    built = make_api()
    watched = WatchedApi(built.stack, built.clock)
    watched.feed = ConsoleFeed(
        built.stack.template.routes,
        lambda client_id: built.container.clients.get(client_id) is not None,
        built.clock.now,
    )
    return watched


def staged(integrator: Integrator, phone: str, dob: str) -> tuple[str, dict[str, object]]:
    correlation = {"correlationId": integrator.start(phoneNumber=phone).json()["correlationId"]}
    assert integrator.post("/v3/validate", correlation).status == 200
    challenged = integrator.post("/v3/challenge", {**correlation, "dob": dob}).json()
    individual = challenged["individual"]
    completed = integrator.post("/v3/complete", {**correlation, "individual": individual}).json()
    return str(correlation["correlationId"]), completed


def test_the_flows_a_developer_runs_show_with_their_steps_reason_codes_and_the_days_counts(
    api: WatchedApi,
) -> None:
    # Given a client running two Sandbox flows: the SIM-swapped user's and the token-only user's
    integrator = api.integrator()
    failed_flow, failed = staged(integrator, SIM_SWAP_USER, SIM_SWAP_DOB)
    passed_flow, passed = staged(integrator, TOKEN_ONLY_USER, TOKEN_ONLY_DOB)
    assert (failed["success"], passed["success"]) == (False, True)

    # When the console reads its feed
    rows = api.feed.requests()
    flows = {flow["correlationId"]: flow for flow in api.feed.flows()}

    # Then every request is a row of its route, client and status
    assert [row["route"] for row in rows] == ["/token"] + [
        "/v3/start",
        "/v3/validate",
        "/v3/challenge",
        "/v3/complete",
    ] * 2
    assert {row["clientId"] for row in rows} == {integrator.client_id}
    assert {row["status"] for row in rows} == {200}
    # And each flow has its steps in order, its outcome and the evaluation's reason codes
    assert [step["step"] for step in flows[failed_flow]["steps"]] == [
        "start",
        "validate",
        "challenge",
        "complete",
    ]
    assert (flows[failed_flow]["outcome"], flows[failed_flow]["reasons"]) == ("fail", [9135])
    assert flows[failed_flow]["evaluation"]["authentication"] == {"result": "fail", "reasons": [9135]}
    assert (flows[passed_flow]["outcome"], flows[passed_flow]["reasons"]) == ("pass", [])
    # And the day counts one pass and one failure for 9135
    assert api.feed.today()["passed"] == 1
    assert (api.feed.today()["failed"], api.feed.today()["byReason"]) == (1, {"9135": 1})


def test_what_the_handlers_answer_and_callers_send_stays_out_of_the_feed(api: WatchedApi) -> None:
    # Given a flow whose challenge answers the person's date of birth and SSN, a token, and a
    # request whose body carries a date of birth where an identifier belongs
    integrator = api.integrator()
    flow, _ = staged(integrator, TOKEN_ONLY_USER, TOKEN_ONLY_DOB)
    answer = integrator.post("/v3/challenge", {"correlationId": TOKEN_ONLY_DOB, "dob": TOKEN_ONLY_DOB})
    assert answer.status == 400

    # Then the feed holds neither, nor the client's secret or its access token
    shown = json.dumps([api.feed.requests(), api.feed.flows(), api.feed.today()])
    for kept_out in (
        TOKEN_ONLY_DOB,
        "911456711",
        integrator.credentials.client_secret,
        integrator.access_token,
    ):
        assert kept_out not in shown
    assert flow in shown
