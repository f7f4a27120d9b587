"""The console's feed of the API's traffic (``phoneid_dev.console_page.feed``), fed request by request
as ``phoneid_dev.gateway_route`` feeds it: a bounded ring of rows, the flows with their steps, the
day's outcomes, and nothing of a body beyond identifiers, statuses and codes."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from phoneid_dev.console_page.feed import ConsoleFeed
from phoneid_dev.template import Route

ROUTES = [
    Route("POST", "/token", "TokenFunction", None),
    Route("POST", "/v3/unify", "UnifyFunction", "ClientAuthorizer"),
    Route("POST", "/v3/unify-status", "UnifyStatusFunction", "ClientAuthorizer"),
    Route("POST", "/v3/verify", "VerifyFunction", "ClientAuthorizer"),
    Route("POST", "/v3/start", "StartFunction", "ClientAuthorizer"),
    Route("POST", "/v3/validate", "ValidateFunction", "ClientAuthorizer"),
    Route("POST", "/v3/challenge", "ChallengeFunction", "ClientAuthorizer"),
    Route("POST", "/v3/complete", "CompleteFunction", "ClientAuthorizer"),
    Route("POST", "/client/v1/otp", "OtpFunction", "FlowAuthorizer"),
    Route("GET", "/l/{token}", "LinkFunction", None),
]
CLIENT = "3f1c0a9b2d4e4f6a8b7c6d5e4f3a2b1c"
FLOW = "6c1d3b7e-2f4a-4c9e-9d1b-5a7e3c2b1f00"
DOB = "1984-03-14"
SSN = "123456789"
SECRET = "s3cr3t-Client-Secret-0123456789abcdef"
OTP = "482915"
NOW = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)


def _jwt(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'EdDSA'})}.{part(claims)}.c2lnbmF0dXJl"


ACCESS = {"authorization": f"Bearer {_jwt({'sub': CLIENT, 'token_use': 'access'})}"}
FLOW_TOKEN = {"authorization": f"Bearer {_jwt({'sub': FLOW, 'cid': CLIENT, 'token_use': 'flow'})}"}


class Clock:
    def __init__(self) -> None:
        self.at = NOW

    def now(self) -> datetime:
        return self.at


def feed(clock: Clock | None = None, **kwargs: Any) -> ConsoleFeed:
    return ConsoleFeed(ROUTES, lambda client_id: client_id == CLIENT, (clock or Clock()).now, **kwargs)


def post(
    watched: ConsoleFeed,
    path: str,
    body: dict[str, Any] | str | None,
    answer: dict[str, Any],
    status: int = 200,
    headers: dict[str, str] | None = None,
    method: str = "POST",
) -> None:
    text = body if isinstance(body, str) or body is None else json.dumps(body)
    watched.observe(method, path, headers or ACCESS, text, status, json.dumps(answer), 12.4)


def everything(watched: ConsoleFeed) -> str:
    return json.dumps([watched.requests(), watched.flows(), watched.today()])


def staged_flow(watched: ConsoleFeed, complete: dict[str, Any]) -> None:
    post(watched, "/v3/start", {"flowType": "mobile", "phoneNumber": "+14045550135"}, {"correlationId": FLOW})
    post(watched, "/v3/validate", {"correlationId": FLOW}, {"success": True, "phoneNumber": "+14045550135"})
    post(
        watched,
        "/v3/challenge",
        {"correlationId": FLOW, "dob": DOB},
        {"success": True, "individual": {"dob": DOB, "ssn": SSN, "firstName": "Quin"}},
    )
    post(watched, "/v3/complete", {"correlationId": FLOW, "individual": {"ssn": SSN}}, complete)


SIM_SWAP = {
    "success": False,
    "next": {"done": "done"},
    "evaluation": {
        "identification": {"result": "pass"},
        "authentication": {
            "result": "fail",
            "failureReasons": {"9135": "Possible takeover: SIM swap under 24 hours"},
        },
    },
}


def test_each_request_is_a_row_of_route_client_status_code_time_and_when() -> None:
    watched = feed()

    post(watched, "/v3/start", {"flowType": "mobile"}, {"code": 8001, "message": "phoneNumber"}, 400)
    watched.observe("GET", "/l/Zm9vYmFyLXNlY3JldC10b2tlbg", {}, None, 410, "<html>", 3.0)
    # A method not of HTTP itself shows as "(other)"
    watched.observe("PROPFIND", "/nowhere/1984-03-14", {}, None, 403, '{"code": 8001}', 1.0)

    assert watched.requests() == [
        {
            "seq": 1,
            "at": "2026-11-26T09:30:00+00:00",
            "method": "POST",
            "route": "/v3/start",
            "clientId": CLIENT,
            "status": 400,
            "code": 8001,
            "ms": 12,
        },
        # A route is named by the template's path: a link's token never shows
        {
            "seq": 2,
            "at": "2026-11-26T09:30:00+00:00",
            "method": "GET",
            "route": "/l/{token}",
            "clientId": None,
            "status": 410,
            "code": None,
            "ms": 3,
        },
        {
            "seq": 3,
            "at": "2026-11-26T09:30:00+00:00",
            "method": "(other)",
            "route": "(no route)",
            "clientId": None,
            "status": 403,
            "code": 8001,
            "ms": 1,
        },
    ]


def test_the_ring_keeps_the_latest_requests_and_the_page_asks_only_for_newer_ones() -> None:
    watched = feed(max_requests=3)

    for _ in range(5):
        post(watched, "/v3/validate", {"correlationId": FLOW}, {"success": True})

    assert [row["seq"] for row in watched.requests()] == [3, 4, 5]
    assert [row["seq"] for row in watched.requests(after=4)] == [5]
    assert watched.requests(after=5) == []


def test_a_client_is_shown_only_when_the_stack_knows_it() -> None:
    watched = feed()
    forged = {"authorization": f"Bearer {_jwt({'sub': DOB})}"}

    post(watched, "/v3/start", {}, {"code": 8001}, 401, headers=forged)
    watched.observe(
        "POST",
        "/token",
        {"content-type": "application/x-www-form-urlencoded"},
        f"grant_type=client_credentials&client_id={CLIENT}&client_secret={SECRET}",
        200,
        json.dumps({"access_token": _jwt({"sub": CLIENT}), "refresh_token": "r-" + SECRET}),
        5.0,
    )

    assert [row["clientId"] for row in watched.requests()] == [None, CLIENT]
    assert DOB not in everything(watched)


def test_a_flow_shows_its_steps_in_order_and_its_evaluation_with_reason_codes() -> None:
    watched = feed()

    staged_flow(watched, SIM_SWAP)
    post(watched, "/client/v1/otp", {}, {"code": 8003, "message": "decided"}, 409, headers=FLOW_TOKEN)

    (flow,) = watched.flows()
    assert flow["correlationId"] == FLOW
    assert (flow["api"], flow["clientId"], flow["outcome"]) == ("staged", CLIENT, "fail")
    assert [(s["step"], s["status"], s["success"], s["code"]) for s in flow["steps"]] == [
        ("start", 200, None, None),
        ("validate", 200, True, None),
        ("challenge", 200, True, None),
        ("complete", 200, False, None),
        ("client otp", 409, None, 8003),
    ]
    assert flow["evaluation"] == {
        "identification": {"result": "pass", "reasons": []},
        "authentication": {"result": "fail", "reasons": [9135]},
    }
    assert flow["reasons"] == [9135]


def test_the_day_counts_each_flow_once_by_outcome_and_reason_code() -> None:
    clock = Clock()
    watched = feed(clock)

    staged_flow(watched, SIM_SWAP)
    post(watched, "/v3/complete", {"correlationId": FLOW}, SIM_SWAP)  # a replay decides nothing again
    post(watched, "/v3/start", {}, {"correlationId": "second-flow"})
    post(watched, "/v3/validate", {"correlationId": "second-flow"}, {"success": True})
    post(watched, "/v3/complete", {"correlationId": "second-flow"}, {"success": True})

    assert watched.today() == {"date": "2026-11-26", "passed": 1, "failed": 1, "byReason": {"9135": 1}}
    clock.at = NOW + timedelta(days=1)
    assert watched.today() == {"date": "2026-11-27", "passed": 0, "failed": 0, "byReason": {}}


def test_a_flow_the_stack_did_not_start_is_never_kept() -> None:
    # Given requests naming flows the feed never saw start (a caller may write anything there)
    watched = feed()
    post(watched, "/v3/validate", {"correlationId": DOB}, {"code": 8002}, 404)
    post(watched, "/v3/complete", {"correlationId": "1234"}, {"success": True})

    # Then they are rows, and no flow, and decide nothing
    assert len(watched.requests()) == 2
    assert watched.flows() == []
    assert watched.today()["passed"] == 0


def test_the_flows_are_bounded_too() -> None:
    watched = feed(max_flows=2)
    for n in range(3):
        post(watched, "/v3/start", {}, {"correlationId": f"flow-{n}"})

    assert [flow["correlationId"] for flow in watched.flows()] == ["flow-2", "flow-1"]


def test_no_date_of_birth_ssn_code_secret_or_token_reaches_the_feed_from_hostile_bodies() -> None:
    # Given requests and answers carrying everything the console must never show
    watched = feed()
    hostile = {
        "correlationId": FLOW,
        "dob": DOB,
        "ssn": SSN,
        "client_secret": SECRET,
        "otp": OTP,
        "code": OTP,
        "success": SECRET,
        "evaluation": {"risk": {"result": DOB, "failureReasons": {SSN: DOB, "9135": SECRET}}},
    }
    post(watched, "/v3/start", hostile, {"correlationId": FLOW, "authToken": _jwt({"sub": FLOW, "otp": OTP})})
    post(watched, "/v3/validate", hostile, {"success": True, "otp": OTP, "code": OTP, "authToken": SECRET})
    post(watched, "/v3/challenge", hostile, {"success": True, "individual": {"dob": DOB, "ssn": SSN}})
    post(watched, "/v3/complete", json.dumps(hostile)[:-7] + DOB, {"code": OTP, "message": DOB}, 400)
    post(
        watched,
        "/v3/complete",
        hostile,
        {
            "success": False,
            "code": DOB,
            "evaluation": {
                DOB: {"result": "fail", "failureReasons": {SSN: SECRET}},
                "risk": {"result": SECRET, "failureReasons": {OTP: DOB, "9302": SSN}},
            },
        },
    )
    watched.observe("GET", f"/l/{SECRET}", {"authorization": f"Basic {SECRET}"}, None, 410, SECRET, 1.0)
    watched.observe("POST", f"/v3/{DOB}/{SSN}", {"x-otp": OTP}, json.dumps(hostile), 403, "{}", 1.0)
    watched.observe(DOB, "/v3/start", {}, None, 403, "{}", 1.0)  # a method is any token a caller sends

    # Then the feed holds none of them, and still the flow's decision and its catalogue's code
    shown = everything(watched)
    for kept_out in (DOB, SSN, SECRET, OTP, "authToken"):
        assert kept_out not in shown, kept_out
    (flow,) = watched.flows()
    assert flow["outcome"] == "fail"
    assert flow["reasons"] == [9302]


def test_a_unified_flow_is_decided_by_its_status_and_a_verification_by_its_own_answer() -> None:
    watched = feed()

    post(
        watched, "/v3/unify", {"possessionType": "mobile"}, {"correlationId": "unified", "success": "pending"}
    )
    post(watched, "/v3/unify-status", {"correlationId": "unified"}, {"success": "pending"})
    post(watched, "/v3/unify-status", {"correlationId": "unified"}, {"success": True, "serviceId": "s-1"})
    post(
        watched,
        "/v3/verify",
        {"phoneNumber": "+12025550112", "dob": DOB},
        {
            "success": "false",
            "correlationId": "verified",
            "evaluation": {
                "identification": {"result": "fail", "failureReasons": {"9003": "Identity not found"}}
            },
        },
    )

    flows = {flow["correlationId"]: flow for flow in watched.flows()}
    assert [(s["step"], s["success"]) for s in flows["unified"]["steps"]] == [
        ("unify", "pending"),
        ("unify-status", "pending"),
        ("unify-status", True),
    ]
    assert (flows["unified"]["api"], flows["unified"]["outcome"]) == ("unify", "pass")
    assert (flows["verified"]["api"], flows["verified"]["outcome"], flows["verified"]["reasons"]) == (
        "verify",
        "fail",
        [9003],
    )
    assert watched.today() == {"date": "2026-11-26", "passed": 1, "failed": 1, "byReason": {"9003": 1}}


class _Sources:
    """What the feed route asks of the stack: the snapshot after a sequence number, recorded."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def snapshot(self, after: int) -> dict[str, Any]:
        self.asked.append(after)
        return {"after": after}


@pytest.mark.parametrize(("after", "read"), [("4", 4), ("²", 0), ("١٢", 0), ("9" * 5000, 0), ("x", 0)])
def test_the_feeds_after_is_a_sequence_number_or_the_start(after: str, read: int) -> None:
    # Given the console's routes / When the page asks for the feed after digits int() refuses, or
    # more of them than it reads
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from phoneid_dev.console_page.routes import ConsoleRoutes

    sources = _Sources()
    client = TestClient(Starlette(routes=ConsoleRoutes(sources).routes()))  # type: ignore[arg-type]
    answer = client.get("/_local/console/feed", params={"after": after})

    # Then the feed answers from the start, where it failed with a ValueError (500)
    assert answer.status_code == 200
    assert sources.asked == [read]


@pytest.mark.parametrize("code", ["²²²²", "8" * 5000])
def test_an_answers_code_in_digits_int_refuses_is_no_code_of_the_api(code: str) -> None:
    from phoneid_dev.console_page.reading import error_code, reason_codes

    # Given an answer whose code is digits to str.isdigit() that int() refuses, or too many of them
    # When read / Then it is no code of the API's, where reading it raised ValueError
    assert error_code(400, {"code": code}) is None
    assert reason_codes([code, "9135"]) == {9135}


@pytest.mark.parametrize(("count", "read"), [("3", 3), ("²", 1), ("9" * 5000, 1)])
def test_a_dead_letters_receive_count_int_refuses_counts_one(count: str, read: int) -> None:
    from phoneid_dev.console_page.panels import _receive_count

    assert _receive_count({"Attributes": {"ApproximateReceiveCount": count}}) == read
