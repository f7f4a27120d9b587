"""Identity Manager end to end on moto, through the local API Gateway: the eight calls, tenancy,
one identity per customer under concurrency, pages, states, PII on disenroll, batches and errors."""

from __future__ import annotations

import base64
import itertools
import json
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from phoneid.domain.clients import Caller, Solution
from phoneid.domain.enrollment import Status
from tests.fakes import START, enrolled_by_verify
from tests.harness import Api, HttpResponse, at_once
from tests.identities import Identities

_numbers = itertools.count(1000)
CREATED_AT = int(START.timestamp())
CREATION_STRING = "2026-11-22T12:00:00Z"


def new_number() -> str:
    """A valid US number no other test of this module uses."""
    return f"+1202555{next(_numbers):04d}"


def code(answer: HttpResponse) -> tuple[int, int]:
    return answer.status, answer.json().get("code")


def identity_items(api: Api) -> list[dict[str, Any]]:
    return [item for item in api.table_items("EnrollmentsTable") if item["kind"]["S"] == "identity"]


# --- each call's answer -------------------------------------------------------------------------


def test_enroll_answers_a_random_service_id_and_get_returns_the_identity(alice: Identities) -> None:
    # Given a number with a customer id, a human id and a device id
    phone = new_number()

    # When it is enrolled and read back
    enrolled = alice.enroll(
        phoneNumber=phone,
        clientCustomerId="customer-1",
        clientHumanId="human-1",
        deviceId="device-0001",
        firstName="Ada",
        lastName="Lovelace",
        identityAttributes=[{"attributeType": "membership", "attributeValue": "gold"}],
        clientRequestId="request-1",
    )
    assert enrolled.status == 200, enrolled.body
    service_id = enrolled.json()["serviceId"]
    read = alice.get(service_id)

    # Then the enrollment says success with a UUID, and the identity is returned with every field
    assert enrolled.status == 200
    assert enrolled.json() == {"serviceId": service_id, "success": True}
    assert str(uuid.UUID(service_id)) == service_id
    assert read.status == 200
    assert read.json() == {
        "serviceId": service_id,
        "phoneNumber": phone,
        "active": True,
        "lineType": "fixed-or-mobile",
        "countryCode": "US",
        "clientCustomerId": "customer-1",
        "clientHumanId": "human-1",
        "deviceId": "device-0001",
        "createdAt": CREATED_AT,
        "creationString": CREATION_STRING,
    }


def test_optional_fields_without_a_value_are_omitted(alice: Identities) -> None:
    phone = new_number()
    service_id = alice.enrolled(phoneNumber=phone)

    assert alice.get(service_id).json() == {
        "serviceId": service_id,
        "phoneNumber": phone,
        "active": True,
        "lineType": "fixed-or-mobile",
        "countryCode": "US",
        "createdAt": CREATED_AT,
        "creationString": CREATION_STRING,
    }


def test_a_national_number_is_enrolled_in_e164(alice: Identities) -> None:
    number = new_number()
    service_id = alice.enrolled(phoneNumber=f"({number[2:5]}) {number[5:8]}-{number[8:]}")

    assert alice.get(service_id).json()["phoneNumber"] == number


def test_list_returns_the_clients_identities(alice: Identities) -> None:
    # Given two identities, one with a customer id
    first, second = new_number(), new_number()
    one = alice.enrolled(phoneNumber=first, clientCustomerId="customer-2")
    alice.api.clock.advance(seconds=1)
    two = alice.enrolled(phoneNumber=second)

    # When the client lists them
    answer = alice.list()

    # Then both are listed, oldest first, with no lastKey
    assert answer.status == 200
    assert answer.json() == {
        "results": [
            {"serviceId": one, "phoneNumber": first, "clientCustomerId": "customer-2", "active": True},
            {"serviceId": two, "phoneNumber": second, "active": True},
        ]
    }


def test_an_empty_list_is_an_empty_object(alice: Identities) -> None:
    # Answers omit empty arrays
    answer = alice.list()

    assert (answer.status, answer.json()) == (200, {})


def test_lookup_returns_the_active_and_inactive_identities_of_a_number(alice: Identities) -> None:
    # Given two customers on one number, the second deactivated
    phone = new_number()
    one = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-3", deviceId="device-0003")
    alice.api.clock.advance(seconds=5)
    two = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-4", clientHumanId="human-4")
    alice.deactivate(two)

    # When the client looks the number up (also with the + percent-encoded)
    answer = alice.lookup(phone)
    encoded = alice.lookup(phone.replace("+", "%2B"))

    # Then both identities are returned, oldest first, as GET returns them
    assert answer.status == 200
    assert answer.json() == {
        "items": [
            {
                "serviceId": one,
                "phoneNumber": phone,
                "active": True,
                "lineType": "fixed-or-mobile",
                "countryCode": "US",
                "clientCustomerId": "customer-3",
                "deviceId": "device-0003",
                "createdAt": CREATED_AT,
                "creationString": CREATION_STRING,
            },
            {
                "serviceId": two,
                "phoneNumber": phone,
                "active": False,
                "lineType": "fixed-or-mobile",
                "countryCode": "US",
                "clientCustomerId": "customer-4",
                "clientHumanId": "human-4",
                "createdAt": CREATED_AT + 5,
                "creationString": "2026-11-22T12:00:05Z",
            },
        ]
    }
    assert encoded.json() == answer.json()


def test_lookup_of_a_number_without_identities_is_8011(alice: Identities) -> None:
    assert code(alice.lookup(new_number())) == (404, 8011)


# --- states ---------------------------------------------------------------------------------


def test_deactivate_and_activate_are_idempotent_and_show_in_active(alice: Identities) -> None:
    # Given an active identity
    service_id = alice.enrolled(phoneNumber=new_number())

    # When it is deactivated twice, read, then activated twice and read
    deactivated = [alice.deactivate(service_id), alice.deactivate(service_id, {"clientRequestId": "r-1"})]
    while_inactive = alice.get(service_id).json()["active"]
    activated = [alice.activate(service_id), alice.activate(service_id)]
    while_active = alice.get(service_id).json()["active"]

    # Then every call succeeds and the identity is inactive, then active
    for answer in deactivated + activated:
        assert (answer.status, answer.json()) == (200, {"success": True})
    assert while_inactive is False
    assert while_active is True


def test_show_inactive_lists_inactive_identities_too(alice: Identities) -> None:
    # Given an active and an inactive identity
    active = alice.enrolled(phoneNumber=new_number())
    alice.api.clock.advance(seconds=1)
    inactive = alice.enrolled(phoneNumber=new_number())
    alice.deactivate(inactive)

    # When the client lists with and without showInactive
    default = alice.list().json()["results"]
    explicit = alice.list(showInactive="false").json()["results"]
    everything = alice.list(showInactive="true").json()["results"]

    # Then only the active one is listed by default; both with showInactive, each with its state
    assert [r["serviceId"] for r in default] == [active]
    assert explicit == default
    assert [(r["serviceId"], r["active"]) for r in everything] == [(active, True), (inactive, False)]


def test_after_disenroll_every_call_answers_8011_and_the_customer_can_enroll_again(
    alice: Identities,
) -> None:
    # Given an identity of customer-5
    phone = new_number()
    service_id = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-5")

    # When it is disenrolled
    disenrolled = alice.disenroll(service_id)

    # Then it is gone for every call, listing and lookup included
    assert (disenrolled.status, disenrolled.json()) == (200, {"success": True})
    for answer in (
        alice.get(service_id),
        alice.disenroll(service_id),
        alice.activate(service_id),
        alice.deactivate(service_id),
        alice.lookup(phone),
    ):
        assert code(answer) == (404, 8011)
    assert alice.list(showInactive="true").json() == {}
    # And the customer may be enrolled anew, as a new identity
    again = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-5")
    assert again != service_id
    assert alice.get(again).json()["active"] is True


def test_disenroll_deletes_the_pii_at_once_and_names_are_never_stored_in_clear(
    api: Api, alice: Identities
) -> None:
    # Given an identity with names, attributes, a human id and a device id
    service_id = alice.enrolled(
        phoneNumber=new_number(),
        clientCustomerId="customer-6",
        clientHumanId="human-zanzibar",
        deviceId="device-zanzibar",
        firstName="Quintessa",
        lastName="Vanderzee",
        identityAttributes=[{"attributeType": "loyalty", "attributeValue": "platinum-xyzzy"}],
    )
    secrets = ("Quintessa", "Vanderzee", "platinum-xyzzy", "loyalty", "human-zanzibar", "device-zanzibar")

    # Then what is stored holds none of them in clear, only a sealed blob
    stored = identity_items(api)
    assert len(stored) == 1
    assert "B" in stored[0]["pii"]
    assert not any(secret in repr(api.table_items("EnrollmentsTable")) for secret in secrets)

    # When it is disenrolled
    api.clock.advance(minutes=30)
    alice.disenroll(service_id)

    # Then only a tombstone is left: no PII, no number, no customer id; it expires after 30 days
    (tombstone,) = identity_items(api)
    assert set(tombstone) == {
        "pk",
        "kind",
        "clientId",
        "serviceId",
        "status",
        "createdAtMs",
        "updatedAtMs",
        "ttl",
    }
    assert tombstone["status"] == {"S": Status.DISENROLLED.value}
    assert int(tombstone["ttl"]["N"]) == int((START + timedelta(days=30, minutes=30)).timestamp())
    # and the customer's place is freed
    assert [item for item in api.table_items("EnrollmentsTable") if item["kind"]["S"] == "place"] == []


# --- one identity per customer ---------------------------------------------------------------


def test_the_same_customer_enrolled_twice_is_the_same_identity(alice: Identities) -> None:
    # Given customer-7 enrolled
    phone = new_number()
    first = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-7", firstName="Ada")

    # When it is enrolled again (even with another number)
    again = alice.enroll(phoneNumber=phone, clientCustomerId="customer-7")
    other_number = alice.enroll(phoneNumber=new_number(), clientCustomerId="customer-7")

    # Then the answer names the existing identity, which is unchanged
    assert again.json() == {"serviceId": first, "success": True}
    assert other_number.json() == {"serviceId": first, "success": True}
    assert alice.get(first).json()["phoneNumber"] == phone
    assert len(identity_items(alice.api)) == 1


@pytest.mark.overlapping
def test_concurrent_enrollments_of_one_customer_create_one_identity(api: Api, alice: Identities) -> None:
    # Given eight requests for customer-8 released at once
    phone = new_number()

    # When they race
    answers = at_once(lambda: alice.enroll(phoneNumber=phone, clientCustomerId="customer-8"), 8)

    # Then all succeed with the same serviceId, and one identity exists
    assert {answer.status for answer in answers} == {200}
    assert len({answer.json()["serviceId"] for answer in answers}) == 1
    assert len(identity_items(api)) == 1


@pytest.mark.overlapping
def test_without_a_customer_id_the_numbers_active_identity_is_returned(api: Api, alice: Identities) -> None:
    # Given a number enrolled without a customer id
    phone = new_number()
    first = alice.enrolled(phoneNumber=phone)

    # When it is enrolled again, at once from several threads, and once with a customer id
    racing = at_once(lambda: alice.enroll(phoneNumber=phone), 4)
    with_customer = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-9")

    # Then the identity without a customer id is returned; the customer gets its own
    assert [answer.status for answer in racing] == [200] * 4
    assert {answer.json()["serviceId"] for answer in racing} == {first}
    assert with_customer != first
    assert len(identity_items(api)) == 2


def test_an_inactive_identity_without_customer_id_gives_its_place_to_a_new_enrollment(
    alice: Identities,
) -> None:
    # Given a number's identity without customer id, deactivated
    phone = new_number()
    old = alice.enrolled(phoneNumber=phone)
    alice.deactivate(old)

    # When the number is enrolled again, twice
    new = alice.enrolled(phoneNumber=phone)
    again = alice.enrolled(phoneNumber=phone)
    # and the old one is disenrolled (the new one keeps its place)
    alice.disenroll(old)
    after = alice.enrolled(phoneNumber=phone)

    # Then a new active identity is created once and returned afterwards
    assert new != old
    assert again == new == after
    assert [item["serviceId"] for item in alice.lookup(phone).json()["items"]] == [new]


# --- pages -------------------------------------------------------------------------------------


def test_pages_return_every_identity_exactly_once_in_order(alice: Identities) -> None:
    # Given seven identities enrolled one second apart
    enrolled = []
    for _ in range(7):
        enrolled.append(alice.enrolled(phoneNumber=new_number()))
        alice.api.clock.advance(seconds=1)

    # When the client pages through them three at a time
    pages = alice.every_page(limit="3")

    # Then there are pages of 3, 3 and 1, the last without lastKey, and each identity once, in order
    assert [len(page["results"]) for page in pages] == [3, 3, 1]
    assert [r["serviceId"] for page in pages for r in page["results"]] == enrolled
    assert all("lastKey" in page for page in pages[:-1])


def test_a_full_last_page_has_no_last_key(alice: Identities) -> None:
    for _ in range(4):
        alice.enrolled(phoneNumber=new_number())

    pages = alice.every_page(limit="2")

    assert [len(page["results"]) for page in pages] == [2, 2]


def test_pages_skip_inactive_identities_unless_asked(alice: Identities) -> None:
    # Given five identities of which the 2nd and 4th are inactive
    enrolled = []
    for index in range(5):
        enrolled.append(alice.enrolled(phoneNumber=new_number()))
        alice.api.clock.advance(seconds=1)
        if index in (1, 3):
            alice.deactivate(enrolled[-1])

    # When the client pages two at a time, without and with showInactive
    active = alice.every_page(limit="2")
    everything = alice.every_page(limit="2", showInactive="true")

    # Then each listing holds its identities exactly once, and full pages stay full
    assert [r["serviceId"] for page in active for r in page["results"]] == enrolled[0:5:2]
    assert [len(page["results"]) for page in active] == [2, 1]
    assert [r["serviceId"] for page in everything for r in page["results"]] == enrolled


def tampered(key: str) -> str:
    decoded = json.loads(base64.urlsafe_b64decode(key + "=" * (-len(key) % 4)))
    decoded["k"] = "not-a-position"
    return base64.urlsafe_b64encode(json.dumps(decoded).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "make_key",
    [
        pytest.param(lambda key: tampered(key), id="tampered"),
        pytest.param(lambda key: key[:-4] + "!!!!", id="not-base64"),
        pytest.param(lambda key: "e30", id="empty-object"),
        pytest.param(lambda key: key + "A", id="truncated-json"),
    ],
)
def test_a_malformed_start_key_is_8001_naming_start_key(
    alice: Identities, make_key: Callable[[str], str]
) -> None:
    for _ in range(3):
        alice.enrolled(phoneNumber=new_number())
    key = alice.list(limit="1").json()["lastKey"]

    answer = alice.list(limit="1", startKey=make_key(key), clientRequestId="page-2")

    assert code(answer) == (400, 8001)
    assert "startKey" in answer.json()["message"]
    assert answer.json()["clientRequestId"] == "page-2"


def test_another_clients_start_key_is_8001_and_reveals_nothing(alice: Identities, bob: Identities) -> None:
    # Given both clients have identities, and Alice has a lastKey
    for who in (alice, bob, alice, bob):
        who.enrolled(phoneNumber=new_number())
    alices_key = alice.list(limit="1").json()["lastKey"]

    # When Bob pages with Alice's key
    answer = bob.list(limit="1", startKey=alices_key)

    # Then it is refused as malformed
    assert code(answer) == (400, 8001)
    assert "startKey" in answer.json()["message"]


def decoded(key: str) -> dict[str, Any]:
    fields: dict[str, Any] = json.loads(base64.urlsafe_b64decode(key + "=" * (-len(key) % 4)))
    return fields


def encoded(fields: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode().rstrip("=")


def positions(api: Api) -> dict[str, str]:
    """Each identity's place in its client's list (the index's sort key), by serviceId."""
    return {item["serviceId"]["S"]: item["createdSk"]["S"] for item in identity_items(api)}


def test_a_made_up_start_key_for_ones_own_client_is_8001(alice: Identities) -> None:
    # Given three identities of Alice, enrolled a second apart
    enrolled = []
    for _ in range(3):
        enrolled.append(alice.enrolled(phoneNumber=new_number()))
        alice.api.clock.advance(seconds=1)
    first = positions(alice.api)[enrolled[0]]
    real = decoded(alice.list(limit="1").json()["lastKey"])

    # When she sends keys she was never given, written as a real one is: her client id, a position
    # of hers, and no MAC or one made up
    answers = [
        alice.list(limit="1", startKey=encoded({"c": alice.integrator.client_id, "k": first})),
        alice.list(limit="1", startKey=encoded({**real, "m": base64.b64encode(bytes(32)).decode()})),
    ]

    # Then each is refused as malformed, naming startKey
    for answer in answers:
        assert code(answer) == (400, 8001), answer.body
        assert "startKey" in answer.json()["message"]


def one_character_changed(key: str) -> str:
    middle = len(key) // 2
    return key[:middle] + ("A" if key[middle] != "A" else "B") + key[middle + 1 :]


@pytest.mark.parametrize(
    "alter",
    [
        pytest.param(lambda key, _: one_character_changed(key), id="one-character-changed"),
        pytest.param(
            lambda key, first: encoded({**decoded(key), "k": first}), id="another-position-same-mac"
        ),
        pytest.param(
            lambda key, _: encoded({**decoded(key), "m": one_character_changed(decoded(key)["m"])}),
            id="same-content-another-mac",
        ),
    ],
)
def test_an_altered_start_key_is_8001(alice: Identities, alter: Callable[[str, str], str]) -> None:
    # Given three identities of Alice and the lastKey of her second page
    enrolled = []
    for _ in range(3):
        enrolled.append(alice.enrolled(phoneNumber=new_number()))
        alice.api.clock.advance(seconds=1)
    first_page = alice.list(limit="1").json()
    key = alice.list(limit="1", startKey=first_page["lastKey"]).json()["lastKey"]

    # When she sends it altered
    answer = alice.list(limit="1", startKey=alter(key, positions(alice.api)[enrolled[0]]))

    # Then it is refused as malformed, naming startKey
    assert code(answer) == (400, 8001), answer.body
    assert "startKey" in answer.json()["message"]


def test_another_clients_key_rewritten_to_name_this_client_is_8001(
    alice: Identities, bob: Identities
) -> None:
    # Given Alice's lastKey, and identities of Bob
    for who in (alice, bob, alice, bob, bob):
        who.enrolled(phoneNumber=new_number())
    alices_key = decoded(alice.list(limit="1").json()["lastKey"])

    # When Bob sends it with his own client id written in
    answer = bob.list(limit="1", startKey=encoded({**alices_key, "c": bob.integrator.client_id}))

    # Then it is refused as malformed
    assert code(answer) == (400, 8001), answer.body
    assert "startKey" in answer.json()["message"]


# --- tenancy and ids -----------------------------------------------------------------------------


def test_tenants_cannot_see_list_look_up_change_or_delete_each_others_identities(
    alice: Identities, bob: Identities
) -> None:
    # Given Alice's identity of a number
    phone = new_number()
    service_id = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-10")

    # When Bob tries every call on it
    answers = [
        bob.get(service_id),
        bob.lookup(phone),
        bob.activate(service_id),
        bob.deactivate(service_id),
        bob.disenroll(service_id),
    ]
    listed = bob.list(showInactive="true")
    # and enrolls the same customer id and number himself
    bobs_own = bob.enrolled(phoneNumber=phone, clientCustomerId="customer-10")

    # Then every call is 8011, his list is empty, his enrollment is a separate identity,
    # and Alice's identity is untouched
    assert [code(answer) for answer in answers] == [(404, 8011)] * 5
    assert listed.json() == {}
    assert bobs_own != service_id
    assert alice.get(service_id).json()["active"] is True
    assert [item["serviceId"] for item in alice.lookup(phone).json()["items"]] == [service_id]


@pytest.mark.parametrize(
    "service_id",
    [
        pytest.param(str(uuid.uuid4()), id="unknown"),
        pytest.param("not-an-id", id="malformed"),
        pytest.param("batch", id="a-word"),
        pytest.param(str(uuid.uuid4()).upper(), id="not-canonical"),
    ],
)
def test_unknown_or_malformed_ids_are_8011_for_every_call(alice: Identities, service_id: str) -> None:
    answers = [
        alice.get(service_id, clientRequestId="lost-1"),
        alice.disenroll(service_id),
        alice.activate(service_id),
        alice.deactivate(service_id, {"clientRequestId": "lost-2"}),
    ]

    assert [code(answer) for answer in answers] == [(404, 8011)] * 4
    assert answers[0].json() == {"code": 8011, "message": "Identity not found", "clientRequestId": "lost-1"}
    assert answers[3].json()["clientRequestId"] == "lost-2"


def test_a_customers_place_cannot_be_read_as_an_identity(api: Api, alice: Identities) -> None:
    # Given an identity with a customer id, whose place item shares the table
    alice.enrolled(phoneNumber=new_number(), clientCustomerId="customer-11")
    (place,) = [item for item in api.table_items("EnrollmentsTable") if item["kind"]["S"] == "place"]
    suffix = place["pk"]["S"].split("#", 1)[1]

    # When the place's key is sent as an id (# percent-encoded, as a URL path carries it)
    answers = [alice.get(suffix.replace("#", "%23")), alice.disenroll(suffix.replace("#", "%23"))]

    # Then nothing is found, and the place stays
    assert [code(answer) for answer in answers] == [(404, 8011)] * 2
    assert [item for item in api.table_items("EnrollmentsTable") if item["kind"]["S"] == "place"] == [place]


# --- batch ----------------------------------------------------------------------------------------


def test_a_batch_of_100_is_enrolled_in_order(alice: Identities) -> None:
    # Given 100 items (a body far over 4 KB)
    numbers = [new_number() for _ in range(100)]
    items = [{"phoneNumber": n, "clientCustomerId": f"batch-{i}"} for i, n in enumerate(numbers)]

    # When they are enrolled in one batch
    answer = alice.batch(items, clientRequestId="batch-1")

    # Then each item has its serviceId, in order
    assert answer.status == 200, answer.body
    results = answer.json()["results"]
    assert len(results) == 100
    assert all(set(result) == {"serviceId"} for result in results)
    assert alice.get(results[42]["serviceId"]).json()["phoneNumber"] == numbers[42]


def test_a_batch_of_101_is_refused_naming_items(alice: Identities) -> None:
    answer = alice.batch([{"phoneNumber": new_number()} for _ in range(101)], clientRequestId="batch-2")

    assert code(answer) == (400, 8001)
    assert "items" in answer.json()["message"]
    assert answer.json()["clientRequestId"] == "batch-2"
    assert alice.list().json() == {}


def test_a_bad_item_gets_its_own_error_while_the_others_enroll(alice: Identities) -> None:
    # Given a batch with a good item, an invalid number, another region's number, an invalid item
    # and the good item's customer again
    good = new_number()
    items = [
        {"phoneNumber": good, "clientCustomerId": "customer-12"},
        {"phoneNumber": "12"},
        {"phoneNumber": "+447911123456"},
        {"phoneNumber": new_number(), "clientRequestId": "not-in-items"},
        {"phoneNumber": good, "clientCustomerId": "customer-12"},
    ]

    # When the batch is sent
    answer = alice.batch(items)

    # Then each item has its own result and the good one is enrolled once
    assert answer.status == 200
    results = answer.json()["results"]
    assert set(results[0]) == {"serviceId"}
    assert results[1]["error"].startswith("Invalid parameters: phoneNumber: ")
    assert results[2] == {
        "error": "Unauthorized for country: numbers of GG are served by the EU host, not this US host"
    }
    assert results[3] == {"error": "Invalid parameters: clientRequestId: Extra inputs are not permitted"}
    assert results[4] == results[0]
    assert alice.get(results[0]["serviceId"]).status == 200


def test_a_batch_body_over_64_kib_is_8001(alice: Identities) -> None:
    padding = "x" * 128
    items = [{"phoneNumber": new_number(), "clientHumanId": padding, "clientCustomerId": padding}] * 100
    body = {"items": items, "clientRequestId": "big"}
    assert len(json.dumps(body)) < 64 * 1024

    too_big = alice._call("POST", "/v3/identity/batch", json.dumps(body) + " " * (64 * 1024))

    assert code(too_big) == (400, 8001)
    assert "65536 bytes" in too_big.json()["message"]


# --- bad requests ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "named"),
    [
        pytest.param({}, "phoneNumber", id="missing-number"),
        pytest.param({"phoneNumber": "+12025550100", "nickname": "x"}, "nickname", id="unknown-field"),
        pytest.param({"phoneNumber": 12025550100}, "phoneNumber", id="number-not-a-string"),
        pytest.param(
            {"phoneNumber": "+12025550100", "clientCustomerId": ""}, "clientCustomerId", id="empty-id"
        ),
        pytest.param({"phoneNumber": "+12025550100", "deviceId": "no spaces!"}, "deviceId", id="device-id"),
        pytest.param(
            {
                "phoneNumber": "+12025550100",
                "identityAttributes": [{"attributeType": "t", "attributeValue": "v"}] * 11,
            },
            "identityAttributes",
            id="eleven-attributes",
        ),
        pytest.param(
            {"phoneNumber": "+12025550100", "identityAttributes": [{"attributeType": "t"}]},
            "identityAttributes.0.attributeValue",
            id="attribute-without-value",
        ),
        pytest.param({"phoneNumber": "+1202"}, "phoneNumber", id="invalid-number"),
    ],
)
def test_a_bad_enroll_body_is_8001_naming_the_parameter(
    alice: Identities, body: dict[str, Any], named: str
) -> None:
    answer = alice.enroll(**body, clientRequestId="bad-1")

    assert code(answer) == (400, 8001)
    assert f"{named}:" in answer.json()["message"]
    assert answer.json()["clientRequestId"] == "bad-1"


def test_a_body_that_is_not_json_is_8001(alice: Identities) -> None:
    for path in ("/v3/identity", "/v3/identity/batch", f"/v3/identity/{uuid.uuid4()}/activate"):
        assert code(alice._call("POST", path, "{not json")) == (400, 8001), path


def test_an_activate_body_with_unknown_fields_is_8001(alice: Identities) -> None:
    service_id = alice.enrolled(phoneNumber=new_number())

    answer = alice.activate(service_id, {"active": True})

    assert code(answer) == (400, 8001)
    assert "active:" in answer.json()["message"]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "1001"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"showInactive": "maybe"}, "showInactive"),
        ({"startKey": ""}, "startKey"),
    ],
)
def test_bad_list_parameters_are_8001_naming_them(
    alice: Identities, query: dict[str, str], named: str
) -> None:
    answer = alice.list(**query, clientRequestId="list-1")

    assert code(answer) == (400, 8001)
    assert answer.json()["message"].startswith(f"Invalid parameters: {named}:")
    assert answer.json()["clientRequestId"] == "list-1"


def test_limit_1000_is_accepted(alice: Identities) -> None:
    alice.enrolled(phoneNumber=new_number())

    assert len(alice.list(limit="1000").json()["results"]) == 1


def test_a_number_of_the_other_region_is_8010(alice: Identities) -> None:
    enrolled = alice.enroll(phoneNumber="+447911123456")
    looked_up = alice.lookup("+447911123456")

    assert code(enrolled) == (403, 8010)
    assert code(looked_up) == (403, 8010)
    assert "EU host" in enrolled.json()["message"]


def test_a_country_the_client_may_not_serve_is_8010(api: Api) -> None:
    canadian_only = Identities(api, api.integrator(countries=["CA"]))

    assert code(canadian_only.enroll(phoneNumber=new_number())) == (403, 8010)


def test_a_malformed_number_in_lookup_is_8001(alice: Identities) -> None:
    answer = alice.lookup("12345")

    assert code(answer) == (400, 8001)
    assert "phoneNumber" in answer.json()["message"]


def test_the_eu_stack_enrolls_european_numbers_and_refuses_american_ones(
    make_api: Callable[..., Api],
) -> None:
    api = make_api(region="EU")
    eu = Identities(api, api.integrator())

    service_id = eu.enrolled(phoneNumber="+447911123456")

    assert eu.get(service_id).json()["countryCode"] == "GG"
    assert eu.get(service_id).json()["lineType"] == "mobile"
    assert code(eu.enroll(phoneNumber=new_number())) == (403, 8010)


# --- what other parts of PhoneID read -------------------------------------------------------------


def test_the_numbers_history_counts_active_identities_of_the_client(api: Api) -> None:
    # Given a number enrolled by Alice 20 days ago and 1 day ago (the older one deactivated), and by Bob
    manager = api.container.identity_manager
    alice, bob = (Caller(client_id=api.create_client().client_id, solution=Solution.IDENTITY) for _ in "ab")
    phone = new_number()
    api.clock.advance(days=-20)
    old = enrolled_by_verify(manager, alice, phone, "customer-13").service_id
    manager.deactivate(alice, old)
    api.clock.advance(days=19)
    enrolled_by_verify(manager, alice, phone, "customer-14")
    enrolled_by_verify(manager, bob, phone, None)
    api.clock.advance(days=1)

    # When the fraud policy asks about Alice's history of the number with a 7-day window
    history = api.container.enrollment_store.history(
        alice.client_id, phone, api.clock.now() - timedelta(days=7)
    )

    # Then one identity is active and recent; the first association is 20 days ago
    assert history.identities == 1
    assert history.short_tenure_identities == 1
    assert history.first_associated == (START - timedelta(days=20)).date()
    assert history.last_associated == START - timedelta(days=1)


def test_the_monitor_walks_every_active_identity_of_every_client(
    api: Api, alice: Identities, bob: Identities
) -> None:
    # Given five active identities of two clients, one inactive and one disenrolled
    active = {alice.enrolled(phoneNumber=new_number()) for _ in range(3)}
    active |= {bob.enrolled(phoneNumber=new_number()) for _ in range(2)}
    alice.deactivate(alice.enrolled(phoneNumber=new_number()))
    bob.disenroll(bob.enrolled(phoneNumber=new_number()))

    # When the monitor walks the three segments of a parallel scan, two items at a time
    store, pages = api.container.enrollment_store, []
    for segment in range(3):
        position: str | None = None
        while True:
            page, position = store.active_segment_page(segment, 3, position, page_size=2)
            pages.append(page)
            if position is None:
                break

    # Then the segments meet each active identity once, and no other
    walked = [e.service_id for page in pages for e in page]
    assert sorted(walked) == sorted(active)
    assert all(e.active and e.pii is None for page in pages for e in page)
