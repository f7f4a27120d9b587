"""The staged flow's step rules: the `next` map of each step, calls out of turn, replays, refused requests,
and which correlationIds are valid (unknown, malformed, another client's, expired), checked in the
responses and in the session item the service stores."""

from __future__ import annotations

import re
import uuid
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeDeserializer

from tests.harness import Api, Integrator
from tests.sandbox_numbers import OTP_PASS, TOKEN_ONLY

# --- shared by the test_staged_* files ---------------------------------------------------------

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
LIFETIME_MINUTES = 15

NEXT = {
    "validate": {"v3-validate": "/v3/validate"},
    "challenge": {"v3-challenge": "/v3/challenge"},
    "complete": {"v3-complete": "/v3/complete"},
    "done": {"done": "done"},
}

# The token-only user as the Sandbox returns it from a successful challenge (full SSN in Sandbox).
KIRA = {
    "firstName": "Kira",
    "lastName": "Petrova",
    "addresses": [{"address": "11 Spruce Loop", "city": "Helena", "region": "MT", "postalCode": "59601"}],
    "ssn": "911456711",
    "dob": "1999-08-08",
    "emailAddresses": ["kira.petrova@example.com"],
}
KIRA_NAME = {"firstName": "Kira", "lastName": "Petrova"}

PASSED = {
    "identification": {"result": "pass"},
    "authentication": {"result": "pass"},
    "compliance": {"result": "pass"},
    "risk": {"result": "pass"},
}
COMPLETED = {"success": True, "next": NEXT["done"], "evaluation": PASSED}


def begin(integrator: Integrator, phone: str = TOKEN_ONLY, **fields: Any) -> str:
    """Start a mobile flow and return its correlationId."""
    started = integrator.start(phoneNumber=phone, **fields)
    assert started.status == 200, started.body
    return str(started.json()["correlationId"])


def valid_body(step: str, correlation_id: str) -> dict[str, Any]:
    """A correct request of ``step`` for the token-only user."""
    if step == "challenge":
        return {"correlationId": correlation_id, "dob": "1999-08-08"}
    if step == "complete":
        return {"correlationId": correlation_id, "individual": dict(KIRA_NAME)}
    return {"correlationId": correlation_id}


def call(integrator: Integrator, step: str, correlation_id: str, **fields: Any) -> Any:
    """POST /v3/<step> with a correct body, ``fields`` added or replacing its parts."""
    return integrator.post(f"/v3/{step}", {**valid_body(step, correlation_id), **fields})


def advance(integrator: Integrator, correlation_id: str, *steps: str) -> None:
    """Answer ``steps`` in order, each with a 200."""
    for step in steps:
        response = call(integrator, step, correlation_id)
        assert response.status == 200, (step, response.body)


def session_at(integrator: Integrator, step: str, **start_fields: Any) -> str:
    """A token-only session whose next expected call is ``step`` (through the challenge path)."""
    correlation_id = begin(integrator, **start_fields)
    order = ["validate", "challenge", "complete", "done"]
    advance(integrator, correlation_id, *order[: order.index(step)])
    return correlation_id


def stored(api: Api, client_id: str, correlation_id: str) -> dict[str, Any] | None:
    """The session item as stored in the sessions table, as plain values (None: no item)."""
    item = (
        boto3.client("dynamodb")
        .get_item(
            TableName=api.stack.physical_ids["SessionsTable"],
            Key={"pk": {"S": f"{client_id}#{correlation_id}"}},
            ConsistentRead=True,
        )
        .get("Item")
    )
    if item is None:
        return None
    deserializer = TypeDeserializer()
    return {name: deserializer.deserialize(value) for name, value in item.items()}


def stored_step(api: Api, integrator: Integrator, correlation_id: str) -> tuple[str, set[str]]:
    """(next expected step, answered steps) of the stored session."""
    item = stored(api, integrator.client_id, correlation_id)
    assert item is not None
    return item["nextStep"], set(item["answered"])


def error_of(response: Any) -> dict[str, Any]:
    """An error body without its human-readable message, which must be present and non-empty."""
    body = dict(response.json())
    assert isinstance(body.get("message"), str)
    assert body["message"]
    return {name: value for name, value in body.items() if name != "message"}


def out_of_turn(correlation_id: str, expected: str) -> dict[str, Any]:
    """The 8003 error body (without message) naming ``expected`` as the call to make."""
    return {"code": 8003, "correlationId": correlation_id, "next": NEXT[expected]}


# --- next maps and correlationIds ----------------------------------------------------------------


def test_each_step_names_the_call_that_follows_through_the_challenge_path(api: Api) -> None:
    # Given an integrator and the token-only user, with no challenge data at start
    integrator = api.integrator()

    # When it walks start, validate, challenge and complete
    started = integrator.start(phoneNumber=TOKEN_ONLY)
    correlation_id = started.json()["correlationId"]
    after_start = stored_step(api, integrator, correlation_id)
    validated = call(integrator, "validate", correlation_id)
    after_validate = stored_step(api, integrator, correlation_id)
    challenged = call(integrator, "challenge", correlation_id)
    after_challenge = stored_step(api, integrator, correlation_id)
    completed = call(integrator, "complete", correlation_id)
    after_complete = stored_step(api, integrator, correlation_id)

    # Then every response is a 200 whose next map names the following call, ending with done
    assert [r.status for r in (started, validated, challenged, completed)] == [200] * 4
    assert started.json()["next"] == {"v3-validate": "/v3/validate"}
    assert validated.json()["next"] == {"v3-challenge": "/v3/challenge"}
    assert challenged.json()["next"] == {"v3-complete": "/v3/complete"}
    assert completed.json() == COMPLETED
    assert completed.json()["next"] == {"done": "done"}
    # And the stored session moved along with them
    assert after_start == ("validate", {"start"})
    assert after_validate == ("challenge", {"start", "validate"})
    assert after_challenge == ("complete", {"start", "validate", "challenge"})
    assert after_complete == ("done", {"start", "validate", "challenge", "complete"})


def test_a_start_with_dob_goes_from_validate_straight_to_complete(api: Api) -> None:
    # Given a flow whose start carried the date of birth
    integrator = api.integrator()
    correlation_id = begin(integrator, dob="1999-08-08")

    # When it validates and completes
    validated = call(integrator, "validate", correlation_id)
    completed = call(integrator, "complete", correlation_id)

    # Then the challenge is not missing, validate names complete, and complete passes
    assert validated.json() == {
        "success": True,
        "challengeMissing": False,
        "phoneNumber": TOKEN_ONLY,
        "next": {"v3-complete": "/v3/complete"},
    }
    assert completed.status == 200
    assert completed.json() == COMPLETED


def test_start_returns_a_fresh_uuid4_correlation_id_each_time(api: Api) -> None:
    # Given an integrator
    integrator = api.integrator()

    # When it starts ten flows for the same user
    bodies = [integrator.start(phoneNumber=TOKEN_ONLY).json() for _ in range(10)]

    # Then each answer is authToken, correlationId and next, every correlationId a distinct UUIDv4
    correlation_ids = [body["correlationId"] for body in bodies]
    assert all(set(body) == {"authToken", "correlationId", "next"} for body in bodies)
    assert all(UUID4.match(correlation_id) for correlation_id in correlation_ids), correlation_ids
    assert len(set(correlation_ids)) == 10
    # And each one is a session of this client, stored under client and correlationId
    for correlation_id in correlation_ids:
        item = stored(api, integrator.client_id, correlation_id)
        assert item is not None
        assert (item["clientId"], item["correlationId"]) == (integrator.client_id, correlation_id)
        assert item["nextStep"] == "validate"


# --- out of turn, replay, after done -------------------------------------------------------------


def test_complete_right_after_start_is_out_of_turn_and_names_validate(api: Api) -> None:
    # Given a flow that was just started
    integrator = api.integrator()
    correlation_id = begin(integrator)

    # When the integrator calls complete (and challenge) before validate
    completed = call(integrator, "complete", correlation_id)
    challenged = call(integrator, "challenge", correlation_id)

    # Then both are 400 with 8003, naming validate and echoing the correlationId
    assert completed.status == 400
    assert error_of(completed) == out_of_turn(correlation_id, "validate")
    assert challenged.status == 400
    assert error_of(challenged) == out_of_turn(correlation_id, "validate")
    # And nothing moved: validate still answers 200
    assert stored_step(api, integrator, correlation_id) == ("validate", {"start"})
    assert call(integrator, "validate", correlation_id).status == 200


def test_challenge_is_out_of_turn_when_start_carried_the_dob(api: Api) -> None:
    # Given a validated flow whose start carried the date of birth (challengeMissing false)
    integrator = api.integrator()
    correlation_id = begin(integrator, dob="1999-08-08")
    validated = call(integrator, "validate", correlation_id)

    # When the integrator calls challenge anyway, tagging its request
    challenged = call(integrator, "challenge", correlation_id, clientRequestId="req-42")

    # Then it is 400 with 8003 naming complete, echoing the tag, and complete still works
    assert validated.json()["challengeMissing"] is False
    assert challenged.status == 400
    assert error_of(challenged) == {**out_of_turn(correlation_id, "complete"), "clientRequestId": "req-42"}
    assert stored_step(api, integrator, correlation_id) == ("complete", {"start", "validate"})
    assert call(integrator, "complete", correlation_id).json() == COMPLETED


@pytest.mark.parametrize(
    ("answered", "replayed", "expected"),
    [
        (["validate"], "validate", "challenge"),
        (["validate", "challenge"], "challenge", "complete"),
        (["validate", "challenge"], "validate", "complete"),
    ],
)
def test_a_step_called_again_after_its_200_is_403(
    api: Api, answered: list[str], replayed: str, expected: str
) -> None:
    # Given a flow whose steps up to some point were answered with 200
    integrator = api.integrator()
    correlation_id = begin(integrator)
    advance(integrator, correlation_id, *answered)
    before = stored(api, integrator.client_id, correlation_id)

    # When one of the answered steps is sent again with the same body
    replay = call(integrator, replayed, correlation_id)

    # Then it is 403 with 8003 naming the call still expected, and the session is untouched
    assert replay.status == 403
    assert error_of(replay) == out_of_turn(correlation_id, expected)
    assert stored(api, integrator.client_id, correlation_id) == before


@pytest.mark.parametrize("step", ["validate", "challenge", "complete"])
def test_every_call_after_the_flow_is_done_is_403(api: Api, step: str) -> None:
    # Given a flow that completed
    integrator = api.integrator()
    correlation_id = session_at(integrator, "done")

    # When any step is called again
    response = call(integrator, step, correlation_id)

    # Then it is 403 with 8003 and next done
    assert response.status == 403
    assert error_of(response) == out_of_turn(correlation_id, "done")
    assert stored_step(api, integrator, correlation_id)[0] == "done"


def test_a_failed_validate_ends_the_flow_so_challenge_is_403(api: Api) -> None:
    # Given a flow of the OTP test user whose possession never happened
    integrator = api.integrator()
    correlation_id = begin(integrator, OTP_PASS)
    validated = call(integrator, "validate", correlation_id)

    # When the integrator goes on to challenge and complete
    challenged = call(integrator, "challenge", correlation_id)
    completed = call(integrator, "complete", correlation_id)

    # Then validate said done, and both later calls are 403 with 8003 and next done
    assert validated.json()["next"] == NEXT["done"]
    assert (challenged.status, completed.status) == (403, 403)
    assert error_of(challenged) == out_of_turn(correlation_id, "done")
    assert error_of(completed) == out_of_turn(correlation_id, "done")


# --- refused requests do not advance ----------------------------------------------------------------


def test_a_challenge_with_neither_ssn_nor_dob_is_refused_and_can_be_corrected(api: Api) -> None:
    # Given a validated flow that still misses the challenge
    integrator = api.integrator()
    correlation_id = session_at(integrator, "challenge")

    # When challenge is sent without ssn and dob, then again with the dob
    refused = integrator.post("/v3/challenge", {"correlationId": correlation_id})
    after_refusal = stored_step(api, integrator, correlation_id)
    corrected = call(integrator, "challenge", correlation_id)

    # Then the first is 400 with 8001 naming both parameters and leaves the session as it was
    assert refused.status == 400
    assert refused.json()["code"] == 8001
    assert "ssn" in refused.json()["message"]
    assert "dob" in refused.json()["message"]
    assert after_refusal == ("challenge", {"start", "validate"})
    # And the corrected request gets its 200
    assert corrected.status == 200
    assert corrected.json() == {"success": True, "individual": KIRA, "next": NEXT["complete"]}


@pytest.mark.parametrize("bad_dob", ["1999-13-01", "1999-02-30", "08-08", "08/08/1999"])
def test_a_complete_with_an_invalid_dob_is_refused_and_can_be_corrected(api: Api, bad_dob: str) -> None:
    # Given a flow waiting for complete
    integrator = api.integrator()
    correlation_id = session_at(integrator, "complete")

    # When complete carries an invalid individual.dob, then a valid one
    refused = call(integrator, "complete", correlation_id, individual={**KIRA_NAME, "dob": bad_dob})
    after_refusal = stored_step(api, integrator, correlation_id)
    corrected = call(integrator, "complete", correlation_id, individual={**KIRA_NAME, "dob": "1999-08-08"})

    # Then the first is 400 with 8001 naming individual.dob, and the session did not move
    assert refused.status == 400
    assert refused.json()["code"] == 8001
    assert "individual.dob" in refused.json()["message"]
    assert bad_dob not in refused.json()["message"]  # reasons never repeat values
    assert after_refusal == ("complete", {"start", "validate", "challenge"})
    # And the corrected request completes the flow
    assert corrected.status == 200
    assert corrected.json() == COMPLETED


# --- which correlationIds are valid ---------------------------------------------------------------


@pytest.mark.parametrize("step", ["validate", "challenge", "complete"])
def test_an_unknown_correlation_id_is_403_8008(api: Api, step: str) -> None:
    # Given an integrator and a well-formed correlationId no flow ever had
    integrator = api.integrator()
    unknown = str(uuid.uuid4())

    # When it is sent
    response = call(integrator, step, unknown)

    # Then it is 403 with 8008 and the correlationId echoed, no next
    assert response.status == 403
    assert error_of(response) == {"code": 8008, "correlationId": unknown}


@pytest.mark.parametrize("step", ["validate", "challenge", "complete"])
@pytest.mark.parametrize("malformed", ["not-a-correlation-id", "UPPER", "", "1234"])
def test_a_malformed_correlation_id_is_400_8001(api: Api, step: str, malformed: str) -> None:
    # Given a real flow, and a correlationId that fails the pattern (an upper-cased real one included)
    integrator = api.integrator()
    correlation_id = begin(integrator)
    sent = correlation_id.upper() if malformed == "UPPER" else malformed

    # When it is sent
    response = call(integrator, step, sent)

    # Then it is 400 with 8001 naming correlationId, and the bad value is not echoed
    assert response.status == 400
    assert error_of(response) == {"code": 8001}
    assert "correlationId" in response.json()["message"]
    assert stored_step(api, integrator, correlation_id) == ("validate", {"start"})


def test_a_correlation_id_of_another_client_looks_exactly_unknown(api: Api) -> None:
    # Given a flow of one client, and a second client
    owner, stranger = api.integrator(), api.integrator()
    correlation_id = begin(owner)
    unknown = str(uuid.uuid4())

    # When the second client uses that correlationId, and an unknown one
    foreign = call(stranger, "validate", correlation_id)
    never = call(stranger, "validate", unknown)

    # Then both are 403 with 8008 and the same message: nothing tells that the flow exists
    assert (foreign.status, never.status) == (403, 403)
    assert error_of(foreign) == {"code": 8008, "correlationId": correlation_id}
    assert error_of(never) == {"code": 8008, "correlationId": unknown}
    assert foreign.json()["message"] == never.json()["message"]
    assert set(foreign.headers) == set(never.headers)
    # And the owner's flow was not touched: it still validates
    assert stored_step(api, owner, correlation_id) == ("validate", {"start"})
    assert call(owner, "validate", correlation_id).status == 200
    # And the stranger has no item under that correlationId
    assert stored(api, stranger.client_id, correlation_id) is None


def test_a_session_works_at_14_59_and_is_expired_at_15_minutes(api: Api) -> None:
    # Given two flows started at the same moment
    integrator = api.integrator()
    in_time, too_late = begin(integrator), begin(integrator)
    unknown = call(integrator, "validate", str(uuid.uuid4()))

    # When one validates at 14 min 59 s, and the other at 15 min
    api.clock.advance(minutes=14, seconds=59)
    validated = call(integrator, "validate", in_time)
    api.clock.advance(seconds=1)
    expired = call(integrator, "validate", too_late)
    expired_after_200 = call(integrator, "challenge", in_time)

    # Then the first is a 200, and at 15 minutes both flows are 403 with 8008, as if unknown
    assert validated.status == 200
    assert expired.status == 403
    assert error_of(expired) == {"code": 8008, "correlationId": too_late}
    assert unknown.status == 403, unknown.body
    assert expired.json()["message"] == unknown.json()["message"]
    assert expired_after_200.status == 403
    assert error_of(expired_after_200) == {"code": 8008, "correlationId": in_time}
    # And expiry is the code's decision: the items are still in the table, unchanged by the refusals
    item = stored(api, integrator.client_id, too_late)
    assert item is not None
    assert (item["nextStep"], item["answered"]) == ("validate", ["start"])
    assert stored_step(api, integrator, in_time) == ("challenge", {"start", "validate"})


def test_challenge_data_is_never_stored_in_plaintext(api: Api) -> None:
    # Given a flow started with a full SSN and a date of birth, and another given them at challenge
    integrator = api.integrator()
    at_start = begin(integrator, ssn="911456711", dob="1999-08-08")
    at_challenge = session_at(integrator, "challenge")
    challenged = call(integrator, "challenge", at_challenge, ssn="911456711", dob="1999-08-08")

    # When the whole sessions table is read raw
    items = api.table_items("SessionsTable")

    # Then neither value appears anywhere, in text or in bytes; they are sealed in the binary "pii"
    assert challenged.status == 200
    assert len(items) >= 2
    raw = repr(items)
    blobs = [value["B"] for item in items for value in item.values() if "B" in value]
    for secret in ("911456711", "1999-08-08"):
        assert secret not in raw
        assert all(secret.encode() not in blob for blob in blobs)
    ours = {item["correlationId"]["S"]: item for item in items if item.get("correlationId")}
    for correlation_id in (at_start, at_challenge):
        assert set(ours[correlation_id]["pii"]) == {"B"}
        assert not {"ssn", "dob", "challenge"} & set(ours[correlation_id])
