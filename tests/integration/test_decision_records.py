"""Decision records end to end on a Sandbox stack, through the local API Gateway: one record per
decision of each kind with what it decided, found by id and by number, the summary, tenancy,
erasure, retention and what a record never holds."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest

from phoneid.adapters.dynamodb.decision_items import unpacked
from phoneid_dev.gateway import HttpResponse
from phoneid_dev.ttl import TtlSweeper
from tests.device import Device, latest_link
from tests.faults import Fault, Injector, Layer, installed
from tests.harness import Api, Integrator, LogRecorder
from tests.sandbox_numbers import OTP_FAIL, OTP_PASS, TOKEN_ONLY

VERIFIED_USER_PASS = "+12025550112"
LENA = {"firstName": "Lena", "lastName": "Ortiz"}
KIRA = {"firstName": "Kira", "lastName": "Petrova"}


class Decisions:
    """The four decision calls as one integrator makes them."""

    def __init__(self, api: Api, integrator: Integrator) -> None:
        self.api = api
        self.integrator = integrator

    def _call(self, method: str, path: str, query: dict[str, str] | None = None) -> HttpResponse:
        return self.api.call(method, path, token=self.integrator.access_token, query=query)

    def list(self, **query: str) -> HttpResponse:
        return self._call("GET", "/v3/decisions", query)

    def listed(self, **query: str) -> list[dict[str, Any]]:
        answer = self.list(**query)
        assert answer.status == 200, answer.body
        return list(answer.json().get("results", []))  # an empty list is left out, as in every answer

    def get(self, decision_id: str) -> HttpResponse:
        return self._call("GET", f"/v3/decisions/{quote(decision_id, safe='')}")

    def summary(self, **query: str) -> HttpResponse:
        return self._call("GET", "/v3/decisions/summary", query)

    def erase(self, phone: str) -> HttpResponse:
        return self._call("DELETE", "/v3/decisions", {"phoneNumber": phone})


def staged_flow(integrator: Integrator, phone: str = TOKEN_ONLY, **complete: Any) -> str:
    """A whole staged flow of the token-only user; its correlationId."""
    started = integrator.start(phoneNumber=phone, clientRequestId="flow-request-1")
    correlation_id = str(started.json()["correlationId"])
    assert integrator.post("/v3/validate", {"correlationId": correlation_id}).status == 200
    assert (
        integrator.post("/v3/challenge", {"correlationId": correlation_id, "dob": "1999-08-08"}).status == 200
    )
    completed = integrator.post(
        "/v3/complete",
        {"correlationId": correlation_id, "individual": complete or KIRA, "clientRequestId": "complete-7"},
    )
    assert completed.status == 200, completed.body
    return correlation_id


def unify_flow(integrator: Integrator) -> tuple[str, str]:
    answer = integrator.post("/v3/unify", {"possessionType": "mobile", "phoneNumber": OTP_PASS})
    assert answer.status == 200, answer.body
    return answer.json()["correlationId"], answer.json()["authToken"]


def record_items(api: Api) -> list[dict[str, Any]]:
    return [item for item in api.table_items("DecisionsTable") if "data" in item]


# --- one record per decision, with what was decided ------------------------------------------------


def test_a_completed_staged_flow_has_one_record_with_its_evaluation_policy_facts_and_possession(
    api: Api,
) -> None:
    # Given an integrator that ran a whole staged flow
    integrator = api.integrator()
    correlation_id = staged_flow(integrator)

    # When it reads the flow's record
    read = Decisions(api, integrator).get(correlation_id)

    # Then the record says what complete answered, under which policy, on which facts
    assert read.status == 200
    body = read.json()
    assert {k: body[k] for k in ("id", "kind", "flow", "outcome", "success", "step", "tier", "region")} == {
        "id": correlation_id,
        "kind": "staged",
        "flow": "mobile",
        "outcome": "pass",
        "success": True,
        "step": "complete",
        "tier": "sandbox",
        "region": "US",
    }
    assert body["evaluation"] == {
        "identification": {"result": "pass"},
        "authentication": {"result": "pass"},
        "compliance": {"result": "pass"},
        "risk": {"result": "pass"},
    }
    assert body["number"] == {"country": "US", "lastTwo": "11"}
    assert body["clientRequestId"] == "complete-7"
    assert body["policy"]["id"] == "default"
    assert len(body["policy"]["hash"]) == 64
    assert body["possession"] == {
        "status": "passed",
        "method": "preset",
        "mobileAuth": "not-tried",
        "smsSent": 0,
        "otpEntries": 0,
        "linksSent": 0,
        "linkOpened": False,
    }
    facts = {fact["signal"]: fact for fact in body["facts"]}
    assert facts["possession"]["value"] == "passed"
    assert facts["possession"]["source"] == "the flow's possession check"
    assert facts["identityFound"]["value"] is True
    assert body["startedAt"] <= body["endedAt"] == facts["identityFound"]["asOf"]
    assert len(record_items(api)) == 1


def test_a_flow_whose_possession_failed_ends_at_validate_with_a_failed_record(api: Api) -> None:
    # Given an OTP flow whose customer entered a wrong code
    integrator = api.integrator()
    started = integrator.start(phoneNumber=OTP_FAIL)
    correlation_id = started.json()["correlationId"]
    device = Device(integrator.api, started.json()["authToken"])
    device.send_otp()
    device.enter("1111")

    # When the integrator validates
    validated = integrator.post("/v3/validate", {"correlationId": correlation_id, "clientRequestId": "val-2"})

    # Then the flow ended there, and its record says so, with the code sent and entered once
    assert validated.status == 200
    assert validated.json()["success"] is False
    read = Decisions(api, integrator).get(correlation_id)
    assert read.status == 200
    body = read.json()
    assert (body["outcome"], body["step"], body["success"]) == ("fail", "validate", False)
    assert body["possession"] == {
        "status": "failed",
        "method": "otp",
        "mobileAuth": "not-tried",
        "smsSent": 1,
        "otpEntries": 1,
        "linksSent": 0,
        "linkOpened": False,
    }
    assert "evaluation" not in body
    assert "policy" not in body
    assert body["clientRequestId"] == "val-2"


def test_a_flow_whose_challenge_failed_ends_there_with_a_failed_record(api: Api) -> None:
    # Given a flow of the token-only user, validated
    integrator = api.integrator()
    correlation_id = integrator.start(phoneNumber=TOKEN_ONLY).json()["correlationId"]
    integrator.post("/v3/validate", {"correlationId": correlation_id})

    # When the challenge gives another birth date
    challenged = integrator.post(
        "/v3/challenge", {"correlationId": correlation_id, "dob": "1970-01-01", "clientRequestId": "ch-1"}
    )

    # Then the flow ended with a failed record of the challenge, its possession passed
    assert challenged.status == 200
    assert challenged.json()["success"] is False
    body = Decisions(api, integrator).get(correlation_id).json()
    assert (body["outcome"], body["step"], body["clientRequestId"]) == ("fail", "challenge", "ch-1")
    assert body["possession"]["status"] == "passed"


def test_a_unify_flow_records_its_key_bound_and_then_used(api: Api) -> None:
    # Given a first unify in which OTP passed and the device registered a key, then a second visit
    integrator = api.integrator()
    first_id, token = unify_flow(integrator)
    device = Device(integrator.api, token)
    device.send_otp()
    device.enter("1234")
    device.register()
    first = integrator.post("/v3/unify-status", {"correlationId": first_id, "clientRequestId": "u-1"})
    second_id, token = unify_flow(integrator)
    device.for_flow(token).prove()
    second = integrator.post("/v3/unify-status", {"correlationId": second_id})

    # When both records are read
    decisions = Decisions(api, integrator)
    records = [decisions.get(first_id).json(), decisions.get(second_id).json()]

    # Then each is a unify record that passed: the first bound the key after a text, the second used it
    assert first.status == second.status == 200
    assert [(r["kind"], r["outcome"], r["step"]) for r in records] == [("unify", "pass", "unify-status")] * 2
    assert records[0]["possession"]["deviceKey"] == "bound"
    assert (records[0]["possession"]["smsSent"], records[0]["clientRequestId"]) == (1, "u-1")
    assert records[1]["possession"]["deviceKey"] == "used"
    assert records[1]["possession"]["smsSent"] == 0


def test_unify_bind_records_its_decision(make_api: Callable[..., Api]) -> None:
    # Given an EU production flow of possessionType none whose device registered a key
    api = make_api(tier="production", region="EU")
    integrator = api.integrator()
    answer = integrator.post("/v3/unify", {"possessionType": "none"})
    correlation_id = answer.json()["correlationId"]
    Device(api, answer.json()["authToken"]).register()

    # When the integrator binds
    bound = integrator.post("/v3/unify-bind", {"correlationId": correlation_id, "clientRequestId": "b-1"})

    # Then its record is the bind's
    assert bound.status == 200
    body = Decisions(api, integrator).get(correlation_id).json()
    assert (body["kind"], body["step"], body["outcome"], body["clientRequestId"]) == (
        "unify",
        "unify-bind",
        "pass",
        "b-1",
    )
    assert (body["tier"], body["region"], body["possession"]["deviceKey"]) == ("production", "EU", "bound")


def test_a_verify_and_each_item_of_a_batch_have_their_records(api: Api) -> None:
    # Given a verify and a batch of a pass, a fail and an item that is no item
    integrator = api.integrator()
    single = integrator.post(
        "/v3/verify", {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
    )
    batch = integrator.post(
        "/v3/verify/batch",
        {
            "items": [
                {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA},
                {
                    "phoneNumber": VERIFIED_USER_PASS,
                    "verificationType": "verifiedUser",
                    "firstName": "Lena",
                    "lastName": "Nobody",
                },
                {"phoneNumber": 12},
            ],
            "clientRequestId": "batch-3",
        },
    )
    assert single.status == 200
    assert batch.status == 200, batch.body
    decisions = Decisions(api, integrator)

    # When each is read by its id
    one = decisions.get(single.json()["correlationId"])
    batch_id = batch.json()["correlationId"]
    items = [decisions.get(f"{batch_id}#{index}") for index in range(3)]

    # Then the verify's record is kind verify, and the batch's items are kind verify-batch in order
    assert one.status == 200
    assert (one.json()["kind"], one.json()["flow"], one.json()["outcome"]) == (
        "verify",
        "verifiedUser",
        "pass",
    )
    assert [item.status for item in items] == [200, 200, 200]
    assert [(i.json()["kind"], i.json()["outcome"]) for i in items] == [
        ("verify-batch", "pass"),
        ("verify-batch", "fail"),
        ("verify-batch", "error"),
    ]
    assert items[2].json()["errorCode"] == 8001
    assert {i.json().get("clientRequestId") for i in items} == {"batch-3"}
    assert items[1].json()["reasonCodes"] == [
        int(code)
        for category in batch.json()["results"][1]["evaluation"].values()
        for code in category.get("failureReasons", {})
    ]
    assert len(record_items(api)) == 4


# --- looked up, filtered and paged ------------------------------------------------------------------


def test_records_are_found_by_number_kind_outcome_reason_request_id_and_time(api: Api) -> None:
    # Given a staged flow, a passing and a failing verify of one client, a second apart
    integrator = api.integrator()
    begun = api.clock.now()
    flow = staged_flow(integrator)
    api.clock.advance(seconds=1)
    passed = integrator.post(
        "/v3/verify",
        {
            "phoneNumber": VERIFIED_USER_PASS,
            "verificationType": "verifiedUser",
            "clientRequestId": "v-1",
            **LENA,
        },
    ).json()["correlationId"]
    api.clock.advance(seconds=1)
    failed = integrator.post(
        "/v3/verify",
        {
            "phoneNumber": VERIFIED_USER_PASS,
            "verificationType": "verifiedUser",
            "firstName": "Lena",
            "lastName": "No",
        },
    ).json()
    decisions = Decisions(api, integrator)
    reason = next(
        int(code) for category in failed["evaluation"].values() for code in category.get("failureReasons", {})
    )

    def ids(**query: str) -> list[str]:
        return [record["id"] for record in decisions.listed(**query)]

    # Then each filter finds exactly its records, newest first
    assert ids() == [failed["correlationId"], passed, flow]
    assert ids(phoneNumber=TOKEN_ONLY) == [flow]
    assert ids(phoneNumber=VERIFIED_USER_PASS) == [failed["correlationId"], passed]
    assert ids(kind="staged") == [flow]
    assert ids(outcome="fail") == [failed["correlationId"]]
    assert ids(reasonCode=str(reason)) == [failed["correlationId"]]
    assert ids(clientRequestId="v-1") == [passed]
    now = api.clock.now()
    assert ids(to=begun.isoformat()) == []
    assert ids(to=(now - timedelta(milliseconds=500)).isoformat()) == [passed, flow]
    assert (
        ids(
            **{"from": (now + timedelta(seconds=1)).isoformat(), "to": (now + timedelta(hours=1)).isoformat()}
        )
        == []
    )
    listed = decisions.listed(phoneNumber=TOKEN_ONLY)[0]
    assert listed["number"] == {"country": "US", "lastTwo": "11"}
    assert "facts" not in listed
    assert "clientRequestId" not in listed


def test_pages_follow_each_other_and_a_tampered_page_key_is_refused(api: Api) -> None:
    # Given five verifications
    integrator = api.integrator()
    made = []
    for _ in range(5):
        verified = integrator.post(
            "/v3/verify", {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
        )
        assert verified.status == 200, verified.body
        made.append(verified.json()["correlationId"])
        api.clock.advance(milliseconds=1)
    decisions = Decisions(api, integrator)

    # When they are listed two at a time
    first = decisions.list(limit="2")
    second = decisions.list(limit="2", startKey=first.json()["lastKey"])
    third = decisions.list(limit="2", startKey=second.json()["lastKey"])
    key = first.json()["lastKey"]
    tampered = decisions.list(limit="2", startKey=key[:-2] + ("A" if key[-2] != "A" else "B") + key[-1])

    # Then the pages hold every record once, newest first, and a changed key is 400/8001
    pages = [first, second, third]
    assert [page.status for page in pages] == [200, 200, 200]
    assert [r["id"] for page in pages for r in page.json()["results"]] == list(reversed(made))
    assert "lastKey" not in third.json()
    assert tampered.status == 400
    assert tampered.json()["code"] == 8001
    assert "startKey" in tampered.json()["message"]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"from": "yesterday"}, "from"),
        ({"from": "0001-01-01T00:00:00+14:00"}, "from"),
        ({"from": "0001-01-01T00:00:00Z", "to": "0001-01-01T00:00:00.0005Z"}, "from"),
        ({"to": "9999-12-31T23:59:59-14:00"}, "to"),
        ({"kind": "sms"}, "kind"),
        ({"phoneNumber": "12"}, "phoneNumber"),
    ],
)
def test_a_bad_filter_is_400_8001_naming_it(api: Api, query: dict[str, str], named: str) -> None:
    answer = Decisions(api, api.integrator()).list(**query)

    assert answer.status == 400
    assert answer.json()["code"] == 8001
    assert named in answer.json()["message"]


# --- the summary ------------------------------------------------------------------------------------


def test_the_summary_counts_what_the_list_lists_by_outcome_kind_reason_day_and_channel(api: Api) -> None:
    # Given a staged flow, an OTP flow that passed and one that failed, a passing and a failing verify
    integrator = api.integrator()
    staged_flow(integrator)
    for phone, code in ((OTP_PASS, "1234"), (OTP_FAIL, "1111")):
        started = integrator.start(phoneNumber=phone, dob="1980-01-01")
        correlation_id = started.json()["correlationId"]
        device = Device(integrator.api, started.json()["authToken"])
        device.send_otp()
        device.enter(code)
        if integrator.post("/v3/validate", {"correlationId": correlation_id}).json()["success"]:
            completed = integrator.post("/v3/complete", {"correlationId": correlation_id, "individual": KIRA})
            assert completed.status == 200, completed.body
    integrator.post(
        "/v3/verify", {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
    )
    integrator.post(
        "/v3/verify",
        {
            "phoneNumber": VERIFIED_USER_PASS,
            "verificationType": "verifiedUser",
            "firstName": "Lena",
            "lastName": "X",
        },
    )
    decisions = Decisions(api, integrator)

    # When the summary and the list are read
    summary = decisions.summary()
    listed = decisions.listed(limit="100")

    # Then the summary's counts are the list's
    assert summary.status == 200
    body = summary.json()
    outcomes = [record["outcome"] for record in listed]
    assert (body["total"], body["passed"], body["failed"], body["errors"]) == (
        len(listed),
        outcomes.count("pass"),
        outcomes.count("fail"),
        outcomes.count("error"),
    )
    kinds: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for record in listed:
        kinds[record["kind"]] = kinds.get(record["kind"], 0) + 1
        for code in record.get("reasonCodes", []):
            reasons[str(code)] = reasons.get(str(code), 0) + 1
    assert body["byKind"] == kinds
    assert body["byReasonCode"] == reasons
    today = api.clock.now().date().isoformat()
    assert body["lastDay"] == today
    assert body["byDay"] == [
        {
            "day": today,
            "total": len(listed),
            "passed": outcomes.count("pass"),
            "failed": outcomes.count("fail"),
            "errors": 0,
        }
    ]
    # The OTP flow that was only validated is still pending: not a decision. Both OTP flows sent a
    # text; one was verified.
    assert (
        body["conversion"]["sms"] == {"attempted": 2, "succeeded": 0, "rate": 0.0}
        or body["conversion"]["sms"]["attempted"] == 2
    )
    assert body["conversion"]["mobileAuth"] == {"attempted": 0, "succeeded": 0}


@pytest.mark.parametrize(
    "query",
    [
        {"from": "2025-01-01", "to": "2026-11-22"},
        {"to": "0001-01-05"},
        {"from": "2026-11-22", "to": "2026-11-21"},
    ],
)
def test_a_summary_of_more_than_366_days_or_out_of_range_is_refused(api: Api, query: dict[str, str]) -> None:
    answer = Decisions(api, api.integrator()).summary(**query)

    assert answer.status == 400
    assert answer.json()["code"] == 8001


# --- tenancy, erasure and retention -----------------------------------------------------------------


def test_another_client_never_sees_counts_or_erases_a_clients_records(api: Api) -> None:
    # Given client A's staged flow, and client B
    alice, bob = api.integrator(), api.integrator()
    flow = staged_flow(alice)
    as_bob = Decisions(api, bob)

    # When B reads A's record, lists, summarises and erases A's number
    read = as_bob.get(flow)
    listed = as_bob.listed(phoneNumber=TOKEN_ONLY)
    summary = as_bob.summary().json()
    erased = as_bob.erase(TOKEN_ONLY)

    # Then B finds, counts and erases nothing, and A's record stands
    assert read.status == 404
    assert read.json()["code"] == 8011
    assert listed == []
    assert summary["total"] == 0
    assert erased.status == 200
    assert erased.json() == {"erased": 0}
    assert Decisions(api, alice).get(flow).status == 200


def test_erasure_removes_the_numbers_records_from_the_list_and_the_summary(api: Api) -> None:
    # Given two staged flows of one number and a verify of another
    integrator = api.integrator()
    flows = [staged_flow(integrator), staged_flow(integrator)]
    integrator.post(
        "/v3/verify", {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
    )
    decisions = Decisions(api, integrator)

    # When the first number's records are erased
    erased = decisions.erase(TOKEN_ONLY)

    # Then two were erased, they are gone from the list and the summary, and the other remains
    assert erased.status == 200
    assert erased.json() == {"erased": 2}
    assert [decisions.get(flow).status for flow in flows] == [404, 404]
    assert [r["kind"] for r in decisions.listed()] == ["verify"]
    summary = decisions.summary().json()
    assert (summary["total"], summary["byKind"]) == (1, {"verify": 1})


def test_a_record_expires_after_the_retention_and_its_days_tallies_with_it(api: Api) -> None:
    # Given a staged flow
    integrator = api.integrator()
    staged_flow(integrator)

    # Then its record and its day's tallies carry a TTL of the retention (1,825 days) past the day
    ended = api.clock.now()
    [record] = record_items(api)
    [tallies] = [item for item in api.table_items("DecisionsTable") if "#day#" in item["pk"]["S"]]
    retention = timedelta(days=1825)
    assert int(record["ttl"]["N"]) == int((ended + retention).timestamp())
    end_of_day = ended.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    assert int(tallies["ttl"]["N"]) == int((end_of_day + retention).timestamp())


# --- nothing personal -------------------------------------------------------------------------------


def test_no_record_page_key_or_log_line_holds_the_number_a_name_a_birth_date_an_ssn_a_code_or_a_link(
    api: Api, request: pytest.FixtureRequest
) -> None:
    # Given the service's every log line recorded (once a first flow has loaded its modules), and
    # flows that carried names, a birth date, an SSN, a one-time code and an Instant Link
    integrator = api.integrator()
    staged_flow(integrator)
    logged: LogRecorder = request.getfixturevalue("logged")
    staged_flow(integrator, firstName="Kira", lastName="Petrova", ssn="911456711", dob="1999-08-08")
    started = integrator.start(phoneNumber=OTP_PASS, dob="1999-08-08")
    device = Device(integrator.api, started.json()["authToken"])
    device.send_otp()
    device.enter("1234")
    correlation_id = started.json()["correlationId"]
    integrator.post("/v3/validate", {"correlationId": correlation_id})
    integrator.post("/v3/complete", {"correlationId": correlation_id, "individual": KIRA})
    linked = integrator.start(
        phoneNumber=OTP_PASS, flowType="desktop", finalTargetUrl="https://shop.example.com/"
    )
    desktop = Device(integrator.api, linked.json()["authToken"])
    desktop.connect_socket()
    desktop.send_link()
    link = latest_link(api, OTP_PASS)
    assert api.get(link).status == 302
    link_token = link.rsplit("/", 1)[1]
    integrator.post("/v3/validate", {"correlationId": linked.json()["correlationId"]})
    integrator.post(
        "/v3/verify", {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
    )
    decisions = Decisions(api, integrator)
    page_key = decisions.list(limit="1").json()["lastKey"]

    # Then no stored byte, no page key and no log line of the service holds any of them
    stored = []
    for item in api.table_items("DecisionsTable"):
        stored.append(json.dumps(item, default=str))
        for packed_attribute in ("data", "listing"):
            if packed_attribute in item:
                stored.append(json.dumps(unpacked(item[packed_attribute]["B"])))
    records = "\n".join(stored)
    canaries = [
        "Kira",
        "Petrova",
        "Lena",
        "Ortiz",
        "911456711",
        "1999-08-08",
        "1234",
        "2025550111",
        "2025550112",
    ]
    assert [canary for canary in [*canaries, link_token] if canary in records] == []
    assert [canary for canary in [*canaries, link_token] if canary in page_key] == []
    logs = "\n".join(logged.lines)
    assert '"msg": "completed"' in logs
    assert [
        canary for canary in ["911456711", "1999-08-08", "Petrova", "Ortiz", link_token] if canary in logs
    ] == []


# --- a record that cannot be written ----------------------------------------------------------------


@pytest.fixture
def injector(monkeypatch: pytest.MonkeyPatch) -> Iterator[Injector]:
    with installed(monkeypatch) as running:
        yield running


def test_a_record_that_cannot_be_written_leaves_the_answer_whole_and_is_logged_for_the_alarm(
    api: Api, injector: Injector, logged: LogRecorder
) -> None:
    # Given an integrator whose verifications make the same calls each time (caches warm)
    integrator = api.integrator()
    body = {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
    assert integrator.post("/v3/verify", body).status == 200
    with injector.record() as calls:
        assert integrator.post("/v3/verify", body).status == 200
    put = [str(call) for call in calls].index("dynamodb.PutItem")  # the decision record

    # When the record's write fails, its retries spent
    with injector.failing(put, Fault.SERVER, Layer.API):
        answered = integrator.post("/v3/verify", body)

    # Then the verification is answered all the same, its record is missing, the summary does not
    # count it, and the log names its id (and nothing of its content) for the alarm
    assert answered.status == 200
    assert answered.json()["success"] == "true"
    decision_id = answered.json()["correlationId"]
    decisions = Decisions(api, integrator)
    assert decisions.get(decision_id).status == 404
    assert decisions.summary().json()["total"] == 2
    [line] = [json.loads(line) for line in logged.lines if "decision records not written" in line]
    assert line["ids"] == [decision_id]
    assert line["count"] == 1
    assert line["error_type"] == "InternalError"
    assert "Lena" not in json.dumps(line)
    assert "2025550112" not in json.dumps(line)


# --- a flow that expired unanswered -------------------------------------------------------------------


def ttl_deleted(item: dict[str, Any], *, by_ttl: bool = True) -> dict[str, Any]:
    """SessionsTable's stream record of ``item`` deleted, as DynamoDB's TTL deletes it."""
    record: dict[str, Any] = {"eventName": "REMOVE", "dynamodb": {"OldImage": item}}
    if by_ttl:
        record["userIdentity"] = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
    return record


def session_item(api: Api, correlation_id: str) -> dict[str, Any]:
    [item] = [
        i for i in api.table_items("SessionsTable") if i.get("correlationId", {}).get("S") == correlation_id
    ]
    return item


def test_a_flow_left_open_gets_an_expired_record_when_ttl_deletes_its_session(api: Api) -> None:
    # Given a flow validated and then left (challenge still to come), and a completed flow
    integrator = api.integrator()
    started_at = api.clock.now()
    left = integrator.start(phoneNumber=TOKEN_ONLY).json()["correlationId"]
    integrator.post("/v3/validate", {"correlationId": left})
    done = staged_flow(integrator)
    items = [session_item(api, left), session_item(api, done)]

    # When TTL deletes both sessions (twice, as a stream may deliver a batch again), and a session is
    # deleted by something else than TTL
    event = {"Records": [ttl_deleted(item) for item in items]}
    first = api.invoke("SessionExpiredFunction", event)
    again = api.invoke("SessionExpiredFunction", event)
    other = api.invoke("SessionExpiredFunction", {"Records": [ttl_deleted(items[0], by_ttl=False)]})

    # Then the flow left open has one failed record that ended when it expired; the completed one
    # keeps its own; the summary counts the expired flow once
    assert (first, again, other) == ({"expired": 1}, {"expired": 1}, {"expired": 0})
    decisions = Decisions(api, integrator)
    body = decisions.get(left).json()
    assert (body["outcome"], body["step"], body["kind"]) == ("fail", "expired", "staged")
    assert body["endedAt"] == (started_at + timedelta(minutes=15)).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"
    )
    assert body["possession"]["status"] == "passed"
    assert decisions.get(done).json()["step"] == "complete"
    summary = decisions.summary().json()
    assert (summary["total"], summary["failed"]) == (2, 1)


def test_the_local_stacks_ttl_deletes_expired_sessions_and_records_their_flows(api: Api) -> None:
    # Given a flow left unanswered, and the local clock a day and a quarter later
    integrator = api.integrator()
    left = integrator.start(phoneNumber=TOKEN_ONLY).json()["correlationId"]
    fresh_before = TtlSweeper(api.stack, api.clock.now).sweep()
    api.clock.advance(hours=25)

    # When the local stack's TTL sweeps its tables, as DynamoDB's would
    swept = TtlSweeper(api.stack, api.clock.now).sweep()

    # Then nothing was deleted before the session's time, then its session is gone and its flow has
    # its expired record, through the table's stream consumer
    assert fresh_before == 0
    assert swept >= 1
    assert [i for i in api.table_items("SessionsTable") if i.get("correlationId", {}).get("S") == left] == []
    a_day_later = Integrator(api, integrator.credentials)  # a new access token: the first has expired
    body = Decisions(api, a_day_later).get(left).json()
    assert (body["outcome"], body["step"]) == ("fail", "expired")


@pytest.mark.parametrize("decision_id", ["x" * 129, "x" * 5000, "%2523", "a%00b"])
def test_an_id_no_record_can_have_is_not_found_without_a_read(api: Api, decision_id: str) -> None:
    answer = Decisions(api, api.integrator()).get(decision_id)

    assert answer.status == 404
    assert answer.json()["code"] == 8011
