"""The console's Decisions panel (``phoneid_dev.console_page.decisions``) on the real decision service
and store on moto: a client's records listed, searched by number and by id, opened whole and
summarised, with the API's codes and messages for what it refuses, and never a number in clear."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from phoneid.domain.decisions import (
    DecisionRecord,
    Kind,
    NumberRef,
    Outcome,
    PolicyRef,
    PossessionAttempts,
)
from phoneid_dev.console_page.decisions import ConsoleDecisions, DecisionRoutes
from tests.harness import Api

SWAPPED = "+14045550135"  # Quin Code9135: complete fails with 9135 (docs/sandbox.md)
SWAPPED_DOB = "1986-05-17"
OTHER = "+12025550111"


class Seeded:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.client = api.create_client(name="acme").client_id
        self.stranger = api.create_client(name="other").client_id
        self.console = ConsoleDecisions(
            lambda: api.container.clients, lambda: api.container.decisions, lambda: {self.client: "demo"}
        )

    def record(
        self, client_id: str, decision_id: str, phone: str, minutes_ago: int, **fields: object
    ) -> None:
        now = self.api.clock.now()
        mac = self.api.container.decision_log.number_mac(client_id, phone)
        record = DecisionRecord(
            **{  # type: ignore[arg-type]
                "id": decision_id,
                "client_id": client_id,
                "tier": "sandbox",
                "region": "US",
                "kind": Kind.STAGED,
                "flow": "mobile",
                "started_at": now - timedelta(minutes=minutes_ago, seconds=30),
                "ended_at": now - timedelta(minutes=minutes_ago),
                "outcome": Outcome.PASS,
                "number": NumberRef(mac=mac, country="US", last_two=phone[-2:]),
                **fields,
            }
        )
        self.api.container.decision_store.add([record])


@pytest.fixture
def seeded(make_api: Callable[..., Api]) -> Seeded:
    seeded = Seeded(make_api())
    failed = {
        "outcome": Outcome.FAIL,
        "categories": {"authentication": "fail", "possession": "pass"},
        "reasons": (9135,),
        "step": "complete",
        "policy": PolicyRef(id="default", version="3", hash="ab" * 32),
        "facts": {"simSwapHoursAgo": 2, "possession": True},
        "possession": PossessionAttempts(status="passed", method="otp", sms_sent=1, otp_entries=1),
    }
    seeded.record(seeded.client, "flow-swapped", SWAPPED, 30, **failed)
    seeded.record(seeded.client, "flow-other", OTHER, 20, possession=PossessionAttempts(status="passed"))
    seeded.record(seeded.client, "batch-1#2", OTHER, 10, kind=Kind.VERIFY_BATCH, flow="verifiedUser")
    seeded.record(seeded.stranger, "flow-strangers", SWAPPED, 5)
    return seeded


def test_a_flow_the_client_ran_is_found_by_its_number_and_opens_whole(seeded: Seeded) -> None:
    # Given a client that ran the SIM-swapped user's staged flow through the API
    integrator = seeded.api.integrator(name="runs flows")
    correlation = {"correlationId": integrator.start(phoneNumber=SWAPPED).json()["correlationId"]}
    assert integrator.post("/v3/validate", correlation).status == 200
    challenged = integrator.post("/v3/challenge", {**correlation, "dob": SWAPPED_DOB}).json()
    completed = integrator.post("/v3/complete", {**correlation, "individual": challenged["individual"]})
    assert completed.json()["success"] is False

    seeded.api.clock.advance(seconds=1)  # a list ends before now (`to` is exclusive)

    # When the operator chooses that client and searches the number, then opens what is found
    status, found = seeded.console.search(integrator.client_id, phone_number=SWAPPED)
    _, view = seeded.console.view(integrator.client_id, str(correlation["correlationId"]))

    # Then the flow's decision is the one found, and opens with the evaluation that failed it
    assert status == 200
    assert [item["id"] for item in found["results"]] == [correlation["correlationId"]]
    assert (view["kind"], view["outcome"], view["reasonCodes"]) == ("staged", "fail", [9135])
    assert view["evaluation"]["authentication"]["result"] == "fail"
    # And nothing of the person is in either: not the number, the date of birth or the SSN
    shown = json.dumps([found, view])
    for kept_out in (SWAPPED, SWAPPED[2:], SWAPPED_DOB, "991351016"):
        assert kept_out not in shown


def test_the_latest_decisions_of_the_chosen_client_come_newest_first_with_no_number_in_clear(
    seeded: Seeded,
) -> None:
    # When the operator chooses the client and searches nothing
    status, answer = seeded.console.search(seeded.client)

    # Then its own decisions show, newest first, each number as its country and last two digits
    assert status == 200
    assert [item["id"] for item in answer["results"]] == ["batch-1#2", "flow-other", "flow-swapped"]
    assert answer["results"][2]["number"] == {"country": "US", "lastTwo": "35"}
    assert answer["results"][2]["reasonCodes"] == [9135]
    assert "lastKey" not in answer
    # And the clients to choose from name what the stack made them for
    clients = {client["clientId"]: client for client in seeded.console.clients()}
    assert clients[seeded.client]["name"] == "acme"
    assert clients[seeded.client]["role"] == "demo"


def test_a_search_by_number_finds_only_that_numbers_decisions_of_the_client(seeded: Seeded) -> None:
    # When the operator searches the SIM-swapped user's number
    status, answer = seeded.console.search(seeded.client, phone_number=SWAPPED)

    # Then only the client's decision of that number shows, not another client's, and not the number
    assert status == 200
    assert [item["id"] for item in answer["results"]] == ["flow-swapped"]
    assert SWAPPED not in json.dumps(answer)
    assert "4045550135" not in json.dumps(answer)


def test_a_search_reads_on_page_by_page_until_the_last(seeded: Seeded) -> None:
    # Given a console that shows two decisions at a time
    console = ConsoleDecisions(
        lambda: seeded.api.container.clients, lambda: seeded.api.container.decisions, page=2
    )

    # When the operator pages through the client's decisions
    status, first = console.search(seeded.client)
    _, second = console.search(seeded.client, start_key=first["lastKey"])

    # Then they come two, then the last one, and no key after it
    assert status == 200
    assert [item["id"] for item in first["results"]] == ["batch-1#2", "flow-other"]
    assert [item["id"] for item in second["results"]] == ["flow-swapped"]
    assert "lastKey" not in second


def test_one_decision_opens_whole_with_its_evaluation_possession_policy_and_facts(seeded: Seeded) -> None:
    # When the operator opens the failed decision
    status, view = seeded.console.view(seeded.client, "flow-swapped")

    # Then every field of the API's view shows
    assert status == 200
    assert (view["kind"], view["outcome"], view["success"], view["step"]) == (
        "staged",
        "fail",
        False,
        "complete",
    )
    assert view["evaluation"]["authentication"]["result"] == "fail"
    assert "9135" in view["evaluation"]["authentication"]["failureReasons"]
    assert view["evaluation"]["possession"] == {"result": "pass"}
    assert view["possession"]["method"] == "otp"
    assert (view["possession"]["smsSent"], view["possession"]["otpEntries"]) == (1, 1)
    assert view["policy"] == {"id": "default", "version": "3", "hash": "ab" * 32}
    facts = {fact["signal"]: fact for fact in view["facts"]}
    assert facts["simSwapHoursAgo"]["value"] == 2
    assert facts["simSwapHoursAgo"]["source"]
    assert facts["simSwapHoursAgo"]["asOf"] == view["endedAt"]
    # And a batch item's id, with its '#', opens as typed and as the API's URL-encoded form
    assert seeded.console.view(seeded.client, "batch-1#2")[1]["kind"] == "verify-batch"
    assert seeded.console.view(seeded.client, "batch-1%232")[1]["id"] == "batch-1#2"


@pytest.mark.parametrize(
    ("ask", "status", "code"),
    [
        (lambda s: s.console.view(s.client, "no-such-flow"), 404, 8011),
        (lambda s: s.console.view(s.client, "flow-strangers"), 404, 8011),  # another client's
        (lambda s: s.console.search(s.client, phone_number="+1202555"), 400, 8001),
        (lambda s: s.console.search(s.client, phone_number="9" * 40), 400, 8001),
        (lambda s: s.console.search(s.client, start_key="tampered"), 400, 8001),
        (lambda s: s.console.summary(s.client, first="yesterday", last=None), 400, 8001),
    ],
)
def test_what_the_api_refuses_shows_its_status_code_and_message(
    seeded: Seeded, ask: Callable[[Seeded], tuple[int, dict[str, object]]], status: int, code: int
) -> None:
    answered, body = ask(seeded)

    assert answered == status
    assert body["code"] == code
    assert isinstance(body["message"], str)
    assert body["message"].startswith("Decision not found" if code == 8011 else "Invalid parameters: ")
    assert "+1202555" not in json.dumps(body)


def test_an_unknown_client_is_refused(seeded: Seeded) -> None:
    status, body = seeded.console.search("no-such-client")

    assert status == 404
    assert "client" in str(body["message"])


def test_the_summary_counts_the_clients_days_reason_codes_and_conversion(seeded: Seeded) -> None:
    # When the operator opens the client's summary of the last 30 days
    status, summary = seeded.console.summary(seeded.client, first=None, last=None)

    # Then its three decisions are counted, not the other client's
    assert status == 200
    assert (summary["total"], summary["passed"], summary["failed"]) == (3, 2, 1)
    assert summary["byReasonCode"] == {"9135": 1}
    assert summary["byKind"] == {"staged": 2, "verify-batch": 1}
    assert summary["byDay"] == [
        {"day": seeded.api.clock.now().date().isoformat(), "total": 3, "passed": 2, "failed": 1, "errors": 0}
    ]
    assert summary["conversion"]["sms"] == {"attempted": 1, "succeeded": 1, "rate": 1.0}


def test_the_routes_take_a_number_in_a_body_and_an_id_url_encoded(seeded: Seeded) -> None:
    # Given the panel's routes
    http = TestClient(Starlette(routes=DecisionRoutes(seeded.console).routes()))

    # When the page lists the clients, searches a number, opens a batch item and asks the summary
    clients = http.get("/_local/console/clients")
    found = http.post(
        "/_local/console/decisions/search", json={"client": seeded.client, "phoneNumber": SWAPPED}
    )
    one = http.get("/_local/console/decisions/one", params={"client": seeded.client, "id": "batch-1#2"})
    summary = http.get("/_local/console/decisions/summary", params={"client": seeded.client})
    unknown = http.get("/_local/console/decisions/one", params={"client": seeded.client, "id": "nope"})
    garbled = http.post("/_local/console/decisions/search", content=b"[1]")
    wrong = http.post("/_local/console/decisions/search", json={"client": seeded.client, "phoneNumber": 1})

    # Then each answers as the panel reads it
    assert clients.status_code == 200
    assert seeded.client in [client["clientId"] for client in clients.json()["clients"]]
    assert found.status_code == 200
    assert [item["id"] for item in found.json()["results"]] == ["flow-swapped"]
    assert (one.status_code, one.json()["id"]) == (200, "batch-1#2")
    assert (summary.status_code, summary.json()["total"]) == (200, 3)
    assert (unknown.status_code, unknown.json()["code"]) == (404, 8011)
    assert (garbled.status_code, garbled.json()["code"]) == (400, 8001)
    assert (wrong.status_code, wrong.json()["code"]) == (400, 8001)
    assert all(answer.headers["cache-control"] == "no-store" for answer in (clients, found, one, summary))
