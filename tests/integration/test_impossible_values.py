"""Dates of birth in the future and SSNs that are never issued are refused where they are taken:
400 with 8001 naming the field, never repeating the value, and the flow does not move."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from phoneid.domain.identity import DOB_FUTURE_RULE, SSN_RULE
from tests.harness import Api, HttpResponse
from tests.integration.test_staged_flow_rules import KIRA_NAME, call, session_at, stored_step

FUTURE = "2999-01-01"
# Never issued: area 000, area 666, group 00, serial 0000, and a last four of 0000.
NEVER_ISSUED = ["000456789", "666-45-6789", "123006789", "123-45-0000", "0000"]


def assert_refused(response: HttpResponse, field: str, rule: str) -> None:
    """400 8001 whose message is exactly ``field`` and the rule it breaks: no value is repeated."""
    assert response.status == 400, response.body
    body = response.json()
    assert (body["code"], body["message"]) == (8001, f"Invalid parameters: {field}: {rule}")


def test_start_refuses_a_future_dob_and_never_issued_ssns_and_takes_yesterday(api: Api) -> None:
    integrator = api.integrator()
    yesterday = (datetime.now(UTC).date() - timedelta(days=1)).isoformat()

    # When start carries a date of birth in the future, or a future month
    future = integrator.start(phoneNumber="+12025550111", dob=FUTURE)
    next_month = integrator.start(phoneNumber="+12025550111", dob="2999-01")

    # Then each is 400 8001 naming dob, saying why
    assert_refused(future, "dob", DOB_FUTURE_RULE)
    assert_refused(next_month, "dob", DOB_FUTURE_RULE)

    # And each SSN that is never issued is refused naming ssn
    for ssn in NEVER_ISSUED:
        assert_refused(integrator.start(phoneNumber="+12025550111", ssn=ssn), "ssn", SSN_RULE)

    # While yesterday (computed now, not a fixed date) is a possible date of birth
    assert integrator.start(phoneNumber="+12025550111", dob=yesterday).status == 200


def test_challenge_and_complete_refuse_them_and_the_flow_does_not_move(api: Api) -> None:
    integrator = api.integrator()
    correlation_id = session_at(integrator, "challenge")

    # When challenge carries a future date of birth, or an SSN never issued
    assert_refused(call(integrator, "challenge", correlation_id, dob=FUTURE), "dob", DOB_FUTURE_RULE)
    for ssn in NEVER_ISSUED:
        refused = integrator.post("/v3/challenge", {"correlationId": correlation_id, "ssn": ssn})
        assert_refused(refused, "ssn", SSN_RULE)

    # Then the session still waits for the challenge, which then passes
    assert stored_step(api, integrator, correlation_id) == ("challenge", {"start", "validate"})
    assert call(integrator, "challenge", correlation_id).status == 200

    # And complete refuses them inside the individual
    individual = {**KIRA_NAME, "dob": FUTURE}
    refused = call(integrator, "complete", correlation_id, individual=individual)
    assert_refused(refused, "individual.dob", DOB_FUTURE_RULE)
    for ssn in NEVER_ISSUED:
        individual = {**KIRA_NAME, "ssn": ssn}
        refused = call(integrator, "complete", correlation_id, individual=individual)
        assert_refused(refused, "individual.ssn", SSN_RULE)
    assert stored_step(api, integrator, correlation_id) == ("complete", {"start", "validate", "challenge"})

    # While the Sandbox user's own 9xx SSN completes the flow
    completed = call(integrator, "complete", correlation_id, individual={**KIRA_NAME, "ssn": "911456711"})
    assert completed.status == 200, completed.body
