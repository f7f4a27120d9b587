"""Idempotency-Key on the six write routes (docs/api.md#retries-with-an-idempotency-key), on a Sandbox
stack through the local API Gateway: a retry gets the first answer again and writes nothing; another
body is 422; a key held by a request in flight is 409; keys are per client; a key lasts 24 hours."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import boto3
import pytest

from phoneid.domain.idempotency import IdempotentRequest, fingerprint
from phoneid_dev.gateway import HttpResponse
from tests.fault_scenarios import _bound
from tests.harness import Api, Integrator, at_once
from tests.sandbox_numbers import TOKEN_ONLY

VERIFIED_USER_PASS = "+12025550112"
LENA = {"firstName": "Lena", "lastName": "Ortiz"}
KEY = "8e03978e-40d5-43e8-bc93-6894a57f9324"


@dataclass(frozen=True)
class Route:
    path: str
    body: dict[str, Any]
    other_body: dict[str, Any]


ROUTES = {
    "start": Route("/v3/start", {"flowType": "mobile", "phoneNumber": TOKEN_ONLY}, {"flowType": "mobile"}),
    "verify": Route(
        "/v3/verify",
        {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA},
        {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", "firstName": "Lena"},
    ),
    "verify_batch": Route(
        "/v3/verify/batch",
        {"items": [{"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}]},
        {"items": [{"phoneNumber": VERIFIED_USER_PASS, "verificationType": "humanAssurance", **LENA}]},
    ),
    "identity": Route(
        "/v3/identity",
        {"phoneNumber": "+12025559001", "clientCustomerId": "customer-1"},
        {"phoneNumber": "+12025559001", "clientCustomerId": "customer-2"},
    ),
    "identity_batch": Route(
        "/v3/identity/batch",
        {"items": [{"phoneNumber": "+12025559001"}, {"phoneNumber": "+12025559002"}]},
        {"items": [{"phoneNumber": "+12025559001"}]},
    ),
}


def written(api: Api) -> dict[str, list[str]]:
    """Every item of every table the requests write (the rate limit's counters aside)."""
    dynamodb = boto3.client("dynamodb")
    tables = {
        name: physical
        for name, physical in api.stack.physical_ids.items()
        if name.endswith("Table") and name != "RateLimitsTable"
    }
    return {
        name: sorted(json.dumps(item, sort_keys=True, default=str) for item in _scan(dynamodb, physical))
        for name, physical in tables.items()
    }


def _scan(dynamodb: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=table):
        items.extend(page["Items"])
    return items


def keyed(integrator: Integrator, route: Route, body: Any = None, key: str = KEY) -> HttpResponse:
    return integrator.post(route.path, route.body if body is None else body, idempotency_key=key)


def revoke_route(api: Api) -> tuple[Integrator, Route]:
    """A client whose device key is bound, and the revocation of that key."""
    _, integrator, _, device_id = _bound(lambda **_: api)
    return integrator, Route("/v3/device/revoke", {"deviceId": device_id}, {"deviceId": "d" * 22})


def route_of(api: Api, name: str) -> tuple[Integrator, Route]:
    """A client holding its access token (the token's own writes come first), and the route."""
    integrator, route = revoke_route(api) if name == "device_revoke" else (api.integrator(), ROUTES[name])
    assert integrator.access_token
    return integrator, route


ALL = [*ROUTES, "device_revoke"]


@pytest.mark.parametrize("name", ALL)
def test_a_retry_under_the_same_key_gets_the_first_answer_and_writes_nothing(api: Api, name: str) -> None:
    # Given a request sent under a key and answered
    integrator, route = route_of(api, name)
    first = keyed(integrator, route)
    assert first.status == 200, first.body
    tables, texts = written(api), api.outbox()

    # When the integrator sends it again under the same key (its first answer was lost)
    again = keyed(integrator, route)

    # Then the answer is the first one, byte for byte, and nothing was written or sent again
    assert (again.status, again.body) == (first.status, first.body)
    assert written(api) == tables
    assert api.outbox() == texts


@pytest.mark.parametrize("name", ALL)
def test_the_same_key_with_another_body_is_422_and_runs_nothing(api: Api, name: str) -> None:
    # Given a request answered under a key
    integrator, route = route_of(api, name)
    assert keyed(integrator, route).status == 200
    tables = written(api)

    # When another request is sent under that key
    refused = keyed(integrator, route, route.other_body)

    # Then it is refused with 422/8021, and nothing ran
    assert refused.status == 422
    assert refused.json()["code"] == 8021
    assert written(api) == tables


@pytest.mark.parametrize("name", ALL)
def test_a_key_held_by_a_request_in_flight_is_409(api: Api, name: str) -> None:
    # Given another attempt of the request holds the key, still running (another instance)
    integrator, route = route_of(api, name)
    held = IdempotentRequest(integrator.client_id, KEY, fingerprint("POST", route.path, route.body))
    api.container.idempotency.begin(held, timedelta(seconds=10))
    tables = written(api)

    # When the request is sent under that key meanwhile
    refused = keyed(integrator, route)

    # Then it is refused with 409/8020, and nothing ran
    assert (refused.status, refused.json().get("code")) == (409, 8020)
    assert written(api) == tables

    # And once the holder's lease has run out (its function timed out) the request runs
    api.clock.advance(seconds=11)
    assert keyed(integrator, route).status == 200


def test_key_order_and_spacing_do_not_make_another_request(api: Api) -> None:
    # Given an enrollment answered under a key
    integrator, route = api.integrator(), ROUTES["identity"]
    first = keyed(integrator, route)

    # When the same body is sent again with its fields in another order and spaced otherwise
    text = '{ "clientCustomerId" : "customer-1",\n  "phoneNumber": "+12025559001" }'
    again = keyed(integrator, route, text)

    # Then it is the same request: the first answer
    assert (again.status, again.body) == (first.status, first.body)


@pytest.mark.parametrize("name", ALL)
def test_another_clients_same_key_is_its_own(api: Api, name: str) -> None:
    # Given one client's request answered under a key
    alice, route = route_of(api, name)
    first = keyed(alice, route)
    assert first.status == 200, first.body

    # When other clients send the same key: one with another body, one with the same body
    other = keyed(api.integrator(), route, route.other_body)
    same = keyed(api.integrator(), route)

    # Then each runs as that client's own request: no 422, no replay of the first client's answer
    assert other.status != 422, other.body
    assert same.body != first.body
    if name == "device_revoke":  # the device is not the other client's
        assert (same.status, same.json().get("code")) == (404, 8011)
    else:
        assert same.status == 200, same.body


@pytest.mark.parametrize("name", ALL)
def test_a_refusal_is_not_kept_so_the_corrected_request_runs_under_the_same_key(api: Api, name: str) -> None:
    # Given a request refused as invalid under a key
    integrator, route = route_of(api, name)
    refused = keyed(integrator, route, {**route.body, "unknownField": 1})
    assert (refused.status, refused.json().get("code")) == (400, 8001)

    # When the corrected request is sent under the same key
    corrected = keyed(integrator, route)

    # Then it runs, and its answer is the one the key keeps
    assert corrected.status == 200
    assert keyed(integrator, route).body == corrected.body


def test_a_key_expires_after_24_hours(api: Api) -> None:
    # Given a flow started under a key
    integrator, route = api.integrator(), ROUTES["start"]
    first = keyed(integrator, route)

    # When the same request comes under the key just before and then 24 hours after the first
    # (each time with a new access token: one lives an hour)
    api.clock.advance(hours=23, minutes=59)
    replayed = keyed(Integrator(api, integrator.credentials), route)
    api.clock.advance(minutes=1)
    after = keyed(Integrator(api, integrator.credentials), route)

    # Then it answered the first flow again until then, and starts a new flow after
    assert replayed.body == first.body
    assert after.status == 200
    assert first.status == 200, first.body
    assert after.json()["correlationId"] != first.json()["correlationId"]


@pytest.mark.parametrize("name", ALL)
def test_after_24_hours_the_key_is_free_for_another_request(api: Api, name: str) -> None:
    # Given a request answered under a key
    integrator, route = route_of(api, name)
    assert keyed(integrator, route).status == 200

    # When another request comes under the key just before, then 24 hours after, the first
    api.clock.advance(hours=23, minutes=59, seconds=59)
    before = keyed(Integrator(api, integrator.credentials), route, route.other_body)
    api.clock.advance(seconds=1)
    after = keyed(Integrator(api, integrator.credentials), route, route.other_body)

    # Then it was the 422 of a key in use until then, and runs after (its own answer, no 422)
    assert (before.status, before.json().get("code")) == (422, 8021)
    assert after.status != 422
    assert after.status in (200, 400, 404), after.body


def test_without_the_header_every_request_runs(api: Api) -> None:
    # Given a client
    integrator, route = api.integrator(), ROUTES["start"]

    # When it starts twice without a key
    first, second = (integrator.post(route.path, route.body) for _ in range(2))

    # Then two flows start
    assert (first.status, second.status) == (200, 200)
    assert first.json()["correlationId"] != second.json()["correlationId"]


@pytest.mark.parametrize(
    "key",
    ["", "a" * 256, "two words", "ключ", '"unterminated', "a,b"],
    ids=["empty", "too-long", "space", "not-ascii", "quote", "list"],
)
def test_a_key_that_breaks_the_rule_is_400_naming_the_header(api: Api, key: str) -> None:
    # Given a client
    integrator, route = route_of(api, "identity")
    tables = written(api)

    # When it sends a request under a key outside the rule
    refused = keyed(integrator, route, key=key)

    # Then it is refused as malformed, naming the header, and nothing ran
    assert refused.status == 400
    assert refused.json()["code"] == 8001
    assert refused.json()["message"].startswith("Invalid parameters: Idempotency-Key: must be 1 to 255")
    assert written(api) == tables


def test_the_drafts_quoted_form_and_the_bare_form_are_one_key(api: Api) -> None:
    # Given an enrollment under a key sent bare
    integrator, route = api.integrator(), ROUTES["identity"]
    first = keyed(integrator, route, key=KEY)

    # When it is sent again with the key as the draft writes it, a quoted string
    again = keyed(integrator, route, key=f'"{KEY}"')

    # Then it is the same key
    assert again.body == first.body


def test_the_kept_answer_is_sealed(api: Api) -> None:
    # Given a verification answered under a key: its answer holds the customer's name and address
    integrator, route = api.integrator(), ROUTES["verify"]
    assert keyed(integrator, route).status == 200

    # Then the idempotency table holds neither the key, nor the name, nor the number in clear
    stored = json.dumps(api.table_items("IdempotencyTable"), default=str)
    assert KEY not in stored
    for clear in ("Ortiz", "Orchard", VERIFIED_USER_PASS):
        assert clear not in stored


def test_other_routes_ignore_the_header(api: Api) -> None:
    # Given a flow started without a key
    integrator = api.integrator()
    correlation_id = integrator.start(phoneNumber=TOKEN_ONLY).json()["correlationId"]

    # When a route that keeps no answers gets a key, even one outside the rule
    answer = integrator.post("/v3/validate", {"correlationId": correlation_id}, idempotency_key="not valid!")

    # Then it answers as it would without the header
    assert answer.status != 400 or answer.json()["code"] != 8001


@pytest.mark.overlapping
def test_requests_sent_at_once_under_one_key_run_once(api: Api) -> None:
    # Given a client and an enrollment
    integrator, route = route_of(api, "identity")
    tables = written(api)

    # When eight copies of it are sent at the same moment under one key
    answers = at_once(lambda: keyed(integrator, route), 8)

    # Then one ran: every 200 is its answer, byte for byte, every other answer the 409 of a key in use
    successes = {answer.body for answer in answers if answer.status == 200}
    assert len(successes) == 1, [(a.status, a.body) for a in answers]
    assert all(answer.json()["code"] == 8020 for answer in answers if answer.status != 200)
    # and one identity was enrolled: as many items as another client's one enrollment makes
    made = len(written(api)["EnrollmentsTable"]) - len(tables["EnrollmentsTable"])
    assert keyed(api.integrator(), route).status == 200
    assert len(written(api)["EnrollmentsTable"]) - len(tables["EnrollmentsTable"]) == 2 * made
