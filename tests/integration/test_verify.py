"""/v3/verify and /v3/verify/batch on a Sandbox stack, through the local API Gateway."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from phoneid.domain.clients import Flag, Solution
from phoneid.domain.sandbox import Catalogue, Scenario
from phoneid_dev.gateway import HttpResponse
from phoneid_dev.template import ROOT
from tests.harness import Api, Integrator
from tests.sandbox_numbers import NOT_A_TEST_USER, TOKEN_ONLY, VERIFIED_USER_FAIL

VERIFIED_USER_PASS = "+12025550112"
LENA = {"firstName": "Lena", "lastName": "Ortiz"}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
ALL_PASS = {
    "identification": {"result": "pass"},
    "authentication": {"result": "pass"},
    "compliance": {"result": "pass"},
    "risk": {"result": "pass"},
}


def verify(integrator: Integrator, phone: str, kind: str = "verifiedUser", **fields: Any) -> HttpResponse:
    return integrator.post("/v3/verify", {"phoneNumber": phone, "verificationType": kind, **fields})


def get_identity(api: Api, integrator: Integrator, service_id: str) -> HttpResponse:
    return api.request(
        "GET", f"/v3/identity/{service_id}", None, {"authorization": f"Bearer {integrator.access_token}"}
    )


def test_a_verified_user_passes_and_is_enrolled(api: Api) -> None:
    # Given a client with automatic enrollment (the default)
    integrator = api.integrator(solution=Solution.VERIFIED_USER)

    # When it verifies the Sandbox user who passes, by name
    answer = verify(
        integrator, VERIFIED_USER_PASS, clientCustomerId="cust-1", clientRequestId="req-1", **LENA
    )

    # Then the answer is the documented facts and the SDKs' fields
    assert answer.status == 200
    body = answer.json()
    assert UUID.match(body.pop("correlationId"))
    assert UUID.match(body.pop("serviceId"))
    assert re.fullmatch(r"[0-9A-F]{32}", body.pop("servicePhoneAlias"))
    assert body == {
        "success": "true",
        "phoneNumber": VERIFIED_USER_PASS,
        "clientRequestId": "req-1",
        "clientCustomerId": "cust-1",
        "isEnrolled": True,
        "identity": {
            "firstName": "Lena",
            "lastName": "Ortiz",
            "assuranceLevel": "AL2",
            "reasons": ["2B"],
            # the PO Box is left out: the client has no po-box-addresses flag
            "addresses": [
                {"address": "12 Orchard Street", "city": "Albany", "region": "NY", "postalCode": "12207"}
            ],
            "emails": ["lena.ortiz@example.com"],
        },
        "evaluation": ALL_PASS,
        "signals": [{"verifiedUser": {"champion": {"label": "verified"}}}],
        # most relevant first; the business she is not tied to is left out
        "businesses": [
            {
                "businessName": "Ortiz Bakery LLC",
                "tradeName": "Lena's Loaves",
                "taxId": "12-3456789",
                "businessAddress": {
                    "address": "8 Market Square",
                    "city": "Albany",
                    "region": "NY",
                    "postalCode": "12207",
                },
                "registrationFiling": {
                    "date": "2015-06-01",
                    "region": "NY",
                    "registrationNumber": "5123456",
                    "registrationType": "LLC",
                },
                "relatedPersons": [{"firstName": "Lena", "lastName": "Ortiz"}],
            },
            {
                "businessName": "Hudson Couriers Inc",
                "businessAddress": {
                    "address": "400 River Road",
                    "city": "Albany",
                    "region": "NY",
                    "postalCode": "12550",
                },
                "relatedPersons": [{"firstName": "Lena", "lastName": "Ortiz"}],
            },
        ],
    }


def test_the_enrolled_identity_is_in_identity_manager_and_a_second_pass_returns_it(api: Api) -> None:
    # Given a first verification that enrolled the customer
    integrator = api.integrator()
    first = verify(integrator, VERIFIED_USER_PASS, clientCustomerId="cust-7", **LENA).json()

    # When the same customer is verified again
    second = verify(integrator, VERIFIED_USER_PASS, clientCustomerId="cust-7", **LENA).json()

    # Then the same identity is returned, now seen before at high confidence (AL3)
    assert second["serviceId"] == first["serviceId"]
    assert (second["identity"]["assuranceLevel"], second["identity"]["reasons"]) == ("AL3", ["3A"])
    stored = get_identity(api, integrator, first["serviceId"])
    assert stored.status == 200
    assert stored.json()["phoneNumber"] == VERIFIED_USER_PASS
    assert stored.json()["clientCustomerId"] == "cust-7"


def test_another_client_cannot_see_the_enrolled_identity(api: Api) -> None:
    # Given one client's verification enrolled the customer
    alice, bob = api.integrator(), api.integrator()
    service_id = verify(alice, VERIFIED_USER_PASS, **LENA).json()["serviceId"]

    # When another client asks for it
    # Then it does not exist for that client
    hidden = get_identity(api, bob, service_id)
    assert (hidden.status, hidden.json().get("code")) == (404, 8011)


def test_the_phone_alias_is_stable_per_client_and_differs_between_clients(api: Api) -> None:
    # Given two clients
    alice, bob = api.integrator(), api.integrator()

    # When each verifies the same number twice
    def aliases(integrator: Integrator) -> set[str]:
        return {verify(integrator, VERIFIED_USER_PASS, **LENA).json()["servicePhoneAlias"] for _ in range(2)}

    # Then each client always gets the same alias, and not the other's
    alices, bobs = aliases(alice), aliases(bob)
    assert len(alices) == len(bobs) == 1
    assert alices != bobs


def test_aliases_cost_one_key_service_call_per_container_not_one_per_verification(api: Api) -> None:
    # Given a container that has made its first alias
    integrator = api.integrator()
    first = verify(integrator, VERIFIED_USER_PASS, **LENA).json()["servicePhoneAlias"]
    kms = api.container.kms
    calls: list[str] = []
    kms.meta.events.register("before-call.kms.*", lambda model, **_: calls.append(model.name))

    # When a batch of 50 is verified
    answer = integrator.post(
        "/v3/verify/batch",
        {"items": [{"phoneNumber": VERIFIED_USER_PASS, "verificationType": "humanAssurance"}] * 50},
    )

    # Then every item has the same alias as before and the key service was not asked again
    assert {item["servicePhoneAlias"] for item in answer.json()["results"]} == {first}
    assert "GenerateMac" not in calls


def test_po_box_addresses_are_shown_when_the_client_flag_allows(api: Api) -> None:
    # Given a client whose operator switched on PO Box addresses
    integrator = api.integrator(flags=[Flag.AUTO_ENROLLMENT, Flag.PO_BOX_ADDRESSES])

    # When it verifies the user
    addresses = verify(integrator, VERIFIED_USER_PASS, **LENA).json()["identity"]["addresses"]

    # Then both addresses are there, the PO Box too
    assert [a["address"] for a in addresses] == ["12 Orchard Street", "PO Box 4411"]


def test_without_automatic_enrollment_a_pass_is_not_enrolled(api: Api) -> None:
    # Given a client whose automatic enrollment the operator turned off
    integrator = api.integrator(flags=[])

    # When it verifies a user who passes
    body = verify(integrator, VERIFIED_USER_PASS, **LENA).json()

    # Then it passes, but is not enrolled and has no serviceId
    assert body["success"] == "true"
    assert body["isEnrolled"] is False
    assert "serviceId" not in body


def test_the_failing_verified_user_is_not_enrolled(api: Api) -> None:
    # Given a Verified User client
    integrator = api.integrator(solution=Solution.VERIFIED_USER)

    # When it verifies the Sandbox user who fails
    body = verify(integrator, VERIFIED_USER_FAIL, firstName="Jamal", lastName="Carter").json()

    # Then nothing matched: not enrolled, no serviceId, no personal data, 9003 and 9175 named
    assert body["success"] == "false"
    assert body["isEnrolled"] is False
    assert "serviceId" not in body
    assert body["identity"] == {"assuranceLevel": "AL0", "reasons": ["0C"]}
    assert body["signals"] == [{"verifiedUser": {"champion": {"label": "no-match"}}}]
    assert body["evaluation"]["identification"] == {
        "result": "fail",
        "failureReasons": {"9003": "Identity not found"},
    }
    assert body["evaluation"]["authentication"]["failureReasons"] == {
        "9175": "No active identity associated with the number"
    }


def test_a_wrong_name_does_not_match_and_reveals_nobody(api: Api) -> None:
    # Given a client that guesses a name for a number
    integrator = api.integrator()

    # When the name is wrong
    body = verify(integrator, VERIFIED_USER_PASS, firstName="Someone", lastName="Else").json()

    # Then it fails as no match, and no name, address or business of the holder is shown
    assert body["success"] == "false"
    assert body["signals"][0]["verifiedUser"]["champion"]["label"] == "no-match"
    assert set(body["evaluation"]["identification"]["failureReasons"]) == {"9001", "9014"}
    assert set(body["identity"]) == {"assuranceLevel", "reasons"}
    assert "businesses" not in body
    assert body["isEnrolled"] is False


def test_human_assurance_needs_no_name_and_shows_no_identity(api: Api) -> None:
    # Given a client checking only that a real person holds the number
    integrator = api.integrator()

    # When it asks Human Assurance without a name
    body = verify(integrator, TOKEN_ONLY, "humanAssurance").json()

    # Then it passes as human, and shows nobody's data
    assert body["success"] == "true"
    assert body["signals"] == [{"humanAssurance": {"champion": {"label": "human"}}}]
    assert set(body["identity"]) == {"assuranceLevel", "reasons"}


def test_human_assurance_fails_for_a_bot_linked_number(api: Api) -> None:
    integrator = api.integrator()

    body = verify(integrator, "+14045550176", "humanAssurance").json()

    assert body["success"] == "false"
    assert body["signals"] == [{"humanAssurance": {"champion": {"label": "not-human"}}}]
    assert body["evaluation"]["authentication"]["failureReasons"] == {
        "9176": "Number and identity strongly linked to bot activity"
    }
    assert body["identity"]["assuranceLevel"] == "AL-1"


def fraud_users() -> list[tuple[int, str, str, str]]:
    users = []
    for user in Catalogue.load("US"):
        if user.scenario == Scenario.FRAUD_SIGNAL and "times out" not in user.description:
            code = int(user.description.split()[1].rstrip(":"))
            users.append((code, user.phone_number, user.identity.first_name, user.identity.last_name))
    return sorted(users)


@pytest.mark.parametrize(("code", "phone", "first", "last"), [u for u in fraud_users() if u[0] != 9011])
def test_every_fraud_signal_user_raises_its_code_in_verify(
    api: Api, code: int, phone: str, first: str, last: str
) -> None:
    # Given the Sandbox user of a reason code
    integrator = api.integrator()

    # When verified by name
    body = verify(integrator, phone, firstName=first, lastName=last).json()

    # Then the code is raised, and it is the only one
    raised = {int(c) for result in body["evaluation"].values() for c in result.get("failureReasons", {})}
    expected = {9001, code} if code in (9012, 9013, 9014, 9015) else {code}
    assert raised == expected
    assert body["success"] == "false"


def test_a_watch_list_that_does_not_answer_fails_closed(api: Api) -> None:
    # Given the Sandbox user whose watch-list source times out
    integrator = api.integrator()

    # When verified
    body = verify(integrator, "+15055550199", "humanAssurance").json()

    # Then compliance fails with 9201 (the rule fails closed), and nothing else fails
    assert body["evaluation"]["compliance"] == {
        "result": "fail",
        "failureReasons": {"9201": "Anti-money-laundering alerts present"},
    }
    assert body["evaluation"]["authentication"] == {"result": "pass"}


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"phoneNumber": TOKEN_ONLY}, "verificationType"),
        (
            {"phoneNumber": TOKEN_ONLY, "verificationType": "prefill"},
            "verificationType: prefill is not offered",
        ),
        (
            {"phoneNumber": TOKEN_ONLY, "verificationType": "fraud"},
            "verificationType: must be verifiedUser or humanAssurance",
        ),
        (
            {"phoneNumber": TOKEN_ONLY, "verificationType": "verifiedUser"},
            "lastName: firstName and lastName are required",
        ),
        ({"verificationType": "humanAssurance"}, "phoneNumber"),
        (
            {"phoneNumber": TOKEN_ONLY, "verificationType": "humanAssurance", "ipAddress": "999.1.1.1"},
            "ipAddress",
        ),
        (
            {"phoneNumber": TOKEN_ONLY, "verificationType": "humanAssurance", "emailAddress": "not-an-email"},
            "emailAddress",
        ),
        ({"phoneNumber": TOKEN_ONLY, "verificationType": "humanAssurance", "nickname": "x"}, "nickname"),
        (
            {
                "phoneNumber": TOKEN_ONLY,
                "verificationType": "humanAssurance",
                "identityAttributes": [{"attributeType": "a"}],
            },
            "identityAttributes.0.attributeValue",
        ),
    ],
)
def test_invalid_requests_get_8001_naming_the_parameter(api: Api, body: dict[str, Any], named: str) -> None:
    answer = api.integrator().post("/v3/verify", body)

    assert answer.status == 400
    assert answer.json()["code"] == 8001
    assert named in answer.json()["message"]


def test_sandbox_numbers_and_regions_are_checked(api: Api) -> None:
    integrator = api.integrator()

    not_a_test_user = verify(integrator, NOT_A_TEST_USER, "humanAssurance")
    other_region = verify(integrator, "+353855550131", "humanAssurance")
    assert (not_a_test_user.status, not_a_test_user.json().get("code")) == (400, 8007)
    assert (other_region.status, other_region.json().get("code")) == (403, 8010)


def test_a_test_user_of_another_solution_is_8009(api: Api) -> None:
    integrator = api.integrator(solution=Solution.IDENTITY)

    answer = verify(integrator, VERIFIED_USER_FAIL, firstName="Jamal", lastName="Carter")

    assert (answer.status, answer.json().get("code")) == (403, 8009)


def test_the_docs_jamal_example_works_with_the_client_it_names(api: Api) -> None:
    # Given the Sandbox section of docs/verify.md: the client it makes for Jamal, and his request
    section = (ROOT / "docs" / "verify.md").read_text().split("\n## Sandbox\n", 1)[1]
    solution = re.search(r"phoneid clients create --local --solution (\S+)", section)
    request = re.search(r"-d '(\{\"phoneNumber\": \"\+12025550110\".*?\})'", section)
    assert solution is not None, "docs/verify.md names no client for Jamal"
    assert request is not None

    # When a client of that solution sends it, and so does the default client make dev prints
    answer = api.integrator(solution=Solution(solution[1])).post("/v3/verify", json.loads(request[1]))
    refused = api.integrator().post("/v3/verify", json.loads(request[1]))

    # Then it answers as the doc shows; the default client gets the 8009 the doc warns of
    assert answer.status == 200
    assert answer.json()["signals"] == [{"verifiedUser": {"champion": {"label": "no-match"}}}]
    assert (answer.json()["success"], answer.json()["isEnrolled"]) == ("false", False)
    assert (refused.status, refused.json().get("code")) == (403, 8009)


# --- batch ------------------------------------------------------------------------------------


def batch(integrator: Integrator, items: list[Any], **fields: Any) -> HttpResponse:
    return integrator.post("/v3/verify/batch", {"items": items, **fields})


def test_batch_answers_one_result_per_item_in_order_each_with_its_own_error(api: Api) -> None:
    # Given a batch with a passing user, a failing one, an invalid item and an unknown test user
    integrator = api.integrator()
    items = [
        {
            "phoneNumber": VERIFIED_USER_PASS,
            "verificationType": "verifiedUser",
            **LENA,
            "clientCustomerId": "c1",
        },
        {"phoneNumber": "+14045550135", "verificationType": "humanAssurance", "clientCustomerId": "c2"},
        {"phoneNumber": TOKEN_ONLY, "clientCustomerId": "c3"},
        {"phoneNumber": NOT_A_TEST_USER, "verificationType": "humanAssurance"},
    ]

    # When sent as one batch
    answer = batch(integrator, items, clientRequestId="batch-1")

    # Then each item has its result, in order
    assert answer.status == 200
    body = answer.json()
    assert UUID.match(body["correlationId"])
    assert body["clientRequestId"] == "batch-1"
    first, second, third, fourth = body["results"]
    assert (first["success"], first["assuranceLevel"], first["clientCustomerId"]) == ("true", "AL2", "c1")
    assert first["isEnrolled"] is True
    assert (second["success"], second["assuranceLevel"]) == ("false", "AL-1")
    assert second["evaluation"]["authentication"]["failureReasons"] == {
        "9135": "Possible takeover: SIM swap under 24 hours"
    }
    assert third["success"] == "false"
    assert "verificationType" in third["error"]
    assert third["clientCustomerId"] == "c3"
    assert fourth["error"].startswith("No Sandbox test user")


def test_batch_of_1000_items_is_accepted_and_1001_refused(api: Api) -> None:
    integrator = api.integrator()
    item = {"phoneNumber": "+1 202 555", "verificationType": "humanAssurance"}

    accepted = batch(integrator, [item] * 1000)
    refused = batch(integrator, [item] * 1001)

    assert accepted.status == 200
    assert len(accepted.json()["results"]) == 1000
    assert all("phoneNumber" in r["error"] for r in accepted.json()["results"])
    assert (refused.status, refused.json().get("code")) == (400, 8001)
    assert "items" in refused.json()["message"]


@pytest.mark.parametrize("items", [[], "all", None])
def test_batch_without_a_list_of_items_is_8001(api: Api, items: Any) -> None:
    answer = batch(api.integrator(), items)

    assert answer.status == 400, answer.body
    assert answer.json()["code"] == 8001
    assert "items" in answer.json()["message"]


def test_the_verify_body_keeps_the_4_kb_limit_but_the_batch_takes_more(api: Api) -> None:
    integrator = api.integrator()
    padding = "x" * 4200

    single = integrator.post(
        "/v3/verify",
        json.dumps({"phoneNumber": TOKEN_ONLY, "verificationType": "humanAssurance", "userAgent": padding}),
    )
    many = batch(integrator, [{"phoneNumber": TOKEN_ONLY, "verificationType": "humanAssurance"}] * 60)

    assert (single.status, single.json().get("code")) == (400, 8001)
    assert many.status == 200


def test_pii_of_a_verification_never_reaches_the_logs(api: Api, logged: Any) -> None:
    integrator = api.integrator()

    verify(integrator, VERIFIED_USER_PASS, **LENA, emailAddress="lena.ortiz@example.com")

    text = "\n".join(logged.lines)
    for secret in ("Ortiz", "Orchard", "lena.ortiz", "912456712", "1983-02-11", "5550112"):
        assert secret not in text
