"""One policy for every flow: the Sandbox reason-code users through complete and unify-status, and a
production stack whose signals come from a scripted CAMARA operator, the operator's lists and
PhoneID's own records."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from phoneid.domain.sandbox import Catalogue, Scenario
from phoneid_dev.operator import FakeOperator
from tests.harness import Api, Integrator
from tests.integration.test_staged_flow_rules import call
from tests.integration.test_unify import status, unify
from tests.unit.helpers import identity_record

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances

CUSTOMER = "+12025550142"
NOOR = {"firstName": "Noor", "lastName": "Haddad"}


def raised(evaluation: dict[str, Any]) -> set[int]:
    return {int(code) for result in evaluation.values() for code in result.get("failureReasons", {})}


def expected(code: int) -> set[int]:
    """A mismatched element comes with 9001, as identification always reports it."""
    return {9001, code} if code in (9012, 9013, 9014, 9015) else {code}


def fraud_users() -> list[Any]:
    users = [u for u in Catalogue.load("US") if u.scenario == Scenario.FRAUD_SIGNAL]
    return sorted(
        (u for u in users if "times out" not in u.description),
        key=lambda u: int(u.description.split()[1][:4]),
    )


@pytest.mark.parametrize("user", fraud_users(), ids=lambda u: u.description.split()[1][:4])
def test_every_fraud_signal_user_raises_its_code_at_complete(api: Api, user: Any) -> None:
    # Given the Sandbox user of a reason code, through the staged flow with curl alone
    integrator = api.integrator()
    code = int(user.description.split()[1][:4])
    started = integrator.start(phoneNumber=user.phone_number)
    correlation_id = started.json()["correlationId"]
    assert call(integrator, "validate", correlation_id).json()["success"] is True
    assert call(integrator, "challenge", correlation_id, dob=user.identity.dob).json()["success"] is True

    # When the integrator completes with the customer's own data
    individual = {
        "firstName": user.identity.first_name,
        "lastName": user.identity.last_name,
        "ssn": user.identity.ssn,
    }
    completed = call(integrator, "complete", correlation_id, individual=individual).json()

    # Then the evaluation fails with that code (and only it), all four categories present
    assert completed["success"] is False
    assert raised(completed["evaluation"]) == expected(code)
    assert list(completed["evaluation"]) == ["identification", "authentication", "compliance", "risk"]


@pytest.mark.parametrize(
    ("phone", "code"), [("+14045550135", 9135), ("+16065550102", 9302), ("+15055550101", 9201)]
)
def test_unify_status_with_check_reputation_evaluates_the_same_policy(
    api: Api, phone: str, code: int
) -> None:
    # Given a unified authentication asking for the reputation check
    integrator = api.integrator()
    correlation_id, _ = unify(integrator, phone, checkReputation=True)

    # When its status is asked
    answer = status(integrator, correlation_id).json()

    # Then it fails with the user's code
    assert answer["success"] is False
    assert raised(answer["evaluation"]) == {code}


def test_unify_status_without_check_reputation_asks_no_source(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, _ = unify(integrator, "+14045550135")

    answer = status(integrator, correlation_id).json()

    assert answer["success"] is True
    assert "evaluation" not in answer


# --- production: signals from a scripted operator, lists and own records ------------------------


@pytest.fixture
def production(make_api: Callable[..., Api], operator: FakeOperator) -> Api:
    """A production stack with Noor in its identity table and a CAMARA operator for its signals."""
    api = make_api(tier="production", operator=operator)
    report = api.container.identity_import.run(json.dumps(identity_record(CUSTOMER)) + "\n", "jsonl")
    assert report.imported == 1
    return api


def verify(integrator: Integrator, phone: str = CUSTOMER, **fields: Any) -> dict[str, Any]:
    answer = integrator.post(
        "/v3/verify", {"phoneNumber": phone, "verificationType": "verifiedUser", **NOOR, **fields}
    )
    assert answer.status == 200, answer.body
    body: dict[str, Any] = answer.json()
    return body


def test_production_verify_passes_on_clean_signals(production: Api) -> None:
    # Given an operator with nothing notable about the number
    integrator = production.integrator()

    # When the integrator verifies Noor by name
    body = verify(integrator)

    # Then every category passes and the identity is enrolled
    assert body["success"] == "true"
    assert raised(body["evaluation"]) == set()
    assert list(body["evaluation"]) == ["identification", "authentication", "compliance", "risk"]
    assert body["isEnrolled"] is True


@pytest.mark.parametrize(
    ("facts", "code"),
    [
        ({"latestSimChange": "2026-11-22T09:00:00Z"}, 9135),
        ({"callForwarding": True}, 9137),
        ({"subscribedSince": "2026-11-10"}, 9161),
        ({"subscribedSince": "2026-10-01"}, 9162),
        ({"subscriber": {"givenName": "Sam", "familyName": "Park"}}, 9168),
    ],
)
def test_production_carrier_signals_raise_their_codes(
    production: Api, operator: FakeOperator, facts: dict[str, Any], code: int
) -> None:
    # Given the operator says something notable about the number (the stack's clock is 2026-11-22 12:00)
    operator.script(CUSTOMER, **facts)
    integrator = production.integrator()

    # When verified
    body = verify(integrator)

    # Then the code is raised in authentication and the verification fails
    assert code in raised(body["evaluation"])
    assert body["success"] == "false"


def test_a_failing_or_slow_carrier_does_not_break_the_request(
    production: Api, operator: FakeOperator
) -> None:
    # Given a SIM swap source that answers 503 and a call-forwarding source slower than its timeout
    operator.script(CUSTOMER, fail={"sim-swap": 503, "call-forwarding": "slow:3"})
    integrator = production.integrator()
    policy = production.container.policies.for_client(integrator.client_id).model_dump(by_alias=True)
    policy["sources"]["timeoutsMs"]["carrier"] = 200
    production.container.client_admin.update(integrator.client_id, policy=json.loads(json.dumps(policy)))

    # When verified
    body = verify(integrator)

    # Then the request is answered, the failed sources raise nothing (their rules fail open)
    assert body["success"] == "true"
    assert not {9135, 9137} & raised(body["evaluation"])


def test_operator_lists_raise_their_codes(production: Api) -> None:
    # Given the operator listed the number as posting SMS publicly and Noor on the AML watch list
    lists = production.container.signal_list_import
    assert lists.run("public-sms", json.dumps({"phoneNumber": CUSTOMER}) + "\n", "jsonl").imported == 1
    assert lists.run("aml", json.dumps(NOOR) + "\n", "jsonl").imported == 1
    integrator = production.integrator()

    # When verified
    body = verify(integrator)

    # Then 9132 (authentication) and 9201 (compliance) are raised
    assert body["evaluation"]["authentication"]["failureReasons"] == {
        "9132": "Number's SMS contents are posted publicly"
    }
    assert body["evaluation"]["compliance"]["failureReasons"] == {
        "9201": "Anti-money-laundering alerts present"
    }


def test_recent_activity_is_counted_per_client(production: Api) -> None:
    # Given ten verifications of the number by one client
    busy, other = production.integrator(), production.integrator()
    for _ in range(10):
        verify(busy)

    # When both clients verify it once more
    # Then only the busy client sees suspiciously large recent activity (9302)
    assert raised(verify(busy)["evaluation"]) == {9302}
    assert raised(verify(other)["evaluation"]) == set()


def test_identities_enrolled_on_one_number_with_short_tenure_raise_injection_codes(production: Api) -> None:
    # Given two of the client's customers enrolled on the same number recently
    integrator = production.integrator()
    for customer in ("c-1", "c-2"):
        enrolled = integrator.post("/v3/identity", {"phoneNumber": CUSTOMER, "clientCustomerId": customer})
        assert enrolled.status == 200, enrolled.body

    # When a third verification comes for the number
    body = verify(integrator, clientCustomerId="c-3")

    # Then possible injection with two short-tenure identities is raised
    assert 9171 in raised(body["evaluation"])
