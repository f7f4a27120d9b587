"""Enrolling many identities at once (a Connect chunk's or a batch's passing rows) on DynamoDB and
KMS (moto): the outcome of enrolling them one after another, in a few calls for all."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from phoneid.adapters.dynamodb.enrollments.store import DynamoEnrollmentStore
from phoneid.adapters.kms import KmsPiiCipher
from phoneid.domain.clients import Caller, Solution
from phoneid.domain.enrollment import ROSTER_LIMIT, Action, IdentityAttribute, Pii, Status
from phoneid.domain.errors import InternalError
from phoneid.services.identity_manager import Enrolled, Enrollee, IdentityManager
from tests.harness import Api

_numbers = itertools.count(2025550300)


def new_number() -> str:
    return f"+1{next(_numbers)}"


def person(n: int) -> Pii:
    return Pii(first_name=f"First{n}", last_name=f"Last{n}", attributes=(IdentityAttribute("tier", str(n)),))


class Calls:
    """The AWS operations a client makes, by name."""

    def __init__(self, *clients: Any) -> None:
        self.names: Counter[str] = Counter()
        for client in clients:
            service = client.meta.service_model.service_name
            client.meta.events.register(
                f"before-call.{service}.*", lambda model, service=service, **_: self._count(service, model)
            )

    def _count(self, service: str, model: Any) -> None:
        self.names[f"{service} {model.name}"] += 1


@pytest.fixture
def caller(api: Api) -> Caller:
    return Caller(client_id=api.create_client().client_id, solution=Solution.VERIFIED_USER)


def enrolled(outcomes: list[Enrolled | Any]) -> list[Enrolled]:
    assert all(isinstance(outcome, Enrolled) for outcome in outcomes), outcomes
    return outcomes


def test_a_chunk_of_new_identities_costs_one_data_key_and_one_transaction_per_thirty_three(
    api: Api, caller: Caller
) -> None:
    # Given 120 people to enroll, each with a customer id and PII
    manager = api.container.identity_manager
    people = [Enrollee(new_number(), f"bulk-{n}", person(n)) for n in range(120)]
    calls = Calls(api.container.kms, api.container.dynamodb)

    # When they are enrolled together
    outcomes = enrolled(manager.enroll_many(caller, people))

    # Then each is a new identity, sealed under one data key, written 33 at a time (with its place and
    # its number's roster: 99 items)
    assert [o.existed for o in outcomes] == [False] * 120
    assert len({o.service_id for o in outcomes}) == 120
    assert calls.names == {
        "kms GenerateDataKey": 1,
        "dynamodb BatchGetItem": 2,  # the 120 places, 100 a call; no holder to read
        "dynamodb TransactWriteItems": 4,
    }
    # and each opens with its own PII (one KMS Decrypt of the data key per read)
    store = api.container.enrollment_store
    for n in (0, 77, 119):
        identity = store.get(caller.client_id, outcomes[n].service_id)
        assert identity is not None
        assert identity.pii == people[n].pii
        assert identity.client_customer_id == f"bulk-{n}"


def test_the_outcome_is_that_of_enrolling_one_after_another(api: Api, caller: Caller) -> None:
    # Given a customer enrolled before, and a number enrolled before without a customer id
    manager = api.container.identity_manager
    known_customer, known_number = new_number(), new_number()
    [before_customer, before_number] = enrolled(
        manager.enroll_many(
            caller, [Enrollee(known_customer, "known", person(1)), Enrollee(known_number, None, Pii())]
        )
    )
    fresh = new_number()

    # When a chunk enrolls them again, a new customer twice, and a new number twice
    outcomes = enrolled(
        manager.enroll_many(
            caller,
            [
                Enrollee(known_customer, "known", person(2)),
                Enrollee(new_number(), "new-customer", person(3)),
                Enrollee(known_number, None, person(4)),
                Enrollee(fresh, None, person(5)),
                Enrollee(new_number(), "new-customer", person(6)),
                Enrollee(fresh, None, person(7)),
            ],
        )
    )

    # Then known places keep their identities, and a place's later rows get its first row's identity
    assert [o.existed for o in outcomes] == [True, False, True, False, True, True]
    assert outcomes[0].service_id == before_customer.service_id
    assert outcomes[2].service_id == before_number.service_id
    assert outcomes[4].service_id == outcomes[1].service_id
    assert outcomes[5].service_id == outcomes[3].service_id
    # and the identity keeps the PII it was enrolled with first
    store = api.container.enrollment_store
    assert store.get(caller.client_id, outcomes[1].service_id).pii == person(3)  # type: ignore[union-attr]


def test_an_inactive_numbers_identity_gives_its_place_to_a_new_one(api: Api, caller: Caller) -> None:
    # Given a number whose identity (no customer id) was deactivated
    manager = api.container.identity_manager
    phone = new_number()
    [old] = enrolled(manager.enroll_many(caller, [Enrollee(phone, None, Pii())]))
    manager.deactivate(caller, old.service_id)

    # When a chunk enrolls the number again, beside a new customer
    outcomes = enrolled(
        manager.enroll_many(
            caller, [Enrollee(phone, None, person(1)), Enrollee(new_number(), "c-9", person(2))]
        )
    )

    # Then a new identity holds the number's place; the old one stays, inactive
    assert [o.existed for o in outcomes] == [False, False]
    assert outcomes[0].service_id != old.service_id
    found = {e.service_id: e.status for e in api.container.enrollment_store.by_phone(caller.client_id, phone)}
    assert found == {old.service_id: Status.INACTIVE, outcomes[0].service_id: Status.ACTIVE}


class PlaceTakenMeanwhile:
    """DynamoDB, except that just before the first transaction another writer enrolls ``customer``."""

    def __init__(self, db: Any, rival: Callable[[], None]) -> None:
        self._db = db
        self._rival = rival
        self.transactions = 0

    def transact_write_items(self, **request: Any) -> Any:
        self.transactions += 1
        if self.transactions == 1:
            self._rival()
        return self._db.transact_write_items(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def test_a_place_taken_meanwhile_is_looked_at_again_and_the_rest_of_its_group_retried(
    api: Api, caller: Caller
) -> None:
    # Given a store whose first transaction loses a race: customer c-race is enrolled by someone else
    container = api.container
    race_phone = new_number()
    rival = DynamoEnrollmentStore(container.dynamodb, container.settings.enrollments_table, container.cipher)
    rival_manager = IdentityManager(
        store=rival, clock=container.clock, region="US", page_mac=container.page_key_mac
    )
    taken: list[Enrolled] = []

    def enroll_first() -> None:
        taken.extend(enrolled(rival_manager.enroll_many(caller, [Enrollee(race_phone, "c-race", Pii())])))

    db = PlaceTakenMeanwhile(container.dynamodb, enroll_first)
    store = DynamoEnrollmentStore(db, container.settings.enrollments_table, container.cipher)
    manager = IdentityManager(
        store=store, clock=container.clock, region="US", page_mac=container.page_key_mac
    )

    # When a chunk enrolls c-race among others
    people = [Enrollee(new_number(), f"c-{n}", person(n)) for n in range(3)]
    outcomes = enrolled(manager.enroll_many(caller, [*people, Enrollee(race_phone, "c-race", person(9))]))

    # Then only c-race looked again on its own (and found the rival's identity); the others were
    # written together by a second transaction
    assert outcomes[3].service_id == taken[0].service_id
    assert [o.existed for o in outcomes] == [False, False, False, True]
    assert db.transactions == 2
    for outcome, enrollee in zip(outcomes[:3], people, strict=True):
        identity = store.get(caller.client_id, outcome.service_id)
        assert identity is not None
        assert identity.pii == enrollee.pii


def test_a_sealed_record_does_not_open_as_another_record(api: Api, caller: Caller) -> None:
    # Given two identities sealed under one data key
    container = api.container
    outcomes = enrolled(
        container.identity_manager.enroll_many(
            caller, [Enrollee(new_number(), "a", person(1)), Enrollee(new_number(), "b", person(2))]
        )
    )
    table = container.settings.enrollments_table
    items = [
        container.dynamodb.get_item(TableName=table, Key={"pk": {"S": f"{caller.client_id}#{o.service_id}"}})[
            "Item"
        ]
        for o in outcomes
    ]
    sealed = [bytes(item["pii"]["B"]) for item in items]
    assert sealed[0][:4] == b"\x00PE1"
    assert sealed[0] != sealed[1]
    cipher = KmsPiiCipher(container.kms, container.settings.pii_key_id)
    context = {"clientId": caller.client_id, "serviceId": outcomes[1].service_id, "use": "enrollment"}

    # When the first's sealed PII is presented as the second's, or as another client's
    # Then it does not open; with its own context it does
    with pytest.raises(InternalError):
        cipher.decrypt(sealed[0], context)
    with pytest.raises(InternalError):
        cipher.decrypt(sealed[1], {**context, "clientId": "another-client"})
    assert b"First2" in cipher.decrypt(sealed[1], context)


def test_a_record_sealed_by_kms_alone_still_opens(api: Api, caller: Caller) -> None:
    # Given PII sealed by KMS Encrypt itself, as single records were before data keys were cached
    kms, key_id = api.container.kms, api.container.settings.pii_key_id
    context = {"clientId": caller.client_id, "serviceId": "s-1", "use": "enrollment"}
    sealed = kms.encrypt(KeyId=key_id, Plaintext=b'{"firstName": "Ada"}', EncryptionContext=context)

    # Then it opens with its context
    cipher = KmsPiiCipher(kms, key_id)
    assert cipher.decrypt(bytes(sealed["CiphertextBlob"]), context) == b'{"firstName": "Ada"}'


def test_a_disenrolled_customer_is_enrolled_anew_in_bulk(api: Api, caller: Caller) -> None:
    # Given a customer enrolled, then disenrolled
    manager = api.container.identity_manager
    phone = new_number()
    [first] = enrolled(manager.enroll_many(caller, [Enrollee(phone, "gone", person(1))]))
    api.container.enrollment_store.apply(
        caller.client_id, first.service_id, Action.DISENROLL, api.clock.now()
    )

    # When a chunk enrolls the customer again
    [again] = enrolled(manager.enroll_many(caller, [Enrollee(phone, "gone", person(2))]))

    # Then it is a new identity
    assert again.existed is False
    assert again.service_id != first.service_id


def test_a_full_roster_leaves_its_numbers_new_identities_in_bulk_not_one_by_one(
    api: Api, caller: Caller
) -> None:
    # Given a number with as many of the client's identities as its roster holds, and one with room
    # for two more
    manager = api.container.identity_manager
    full, nearly = new_number(), new_number()
    enrolled(manager.enroll_many(caller, [Enrollee(full, f"full-{n}", Pii()) for n in range(ROSTER_LIMIT)]))
    enrolled(
        manager.enroll_many(caller, [Enrollee(nearly, f"near-{n}", Pii()) for n in range(ROSTER_LIMIT - 2)])
    )
    calls = Calls(api.container.kms, api.container.dynamodb)

    # When a chunk enrolls 30 new customers on each of them
    people = [Enrollee(phone, f"more-{phone}-{n}", person(n)) for phone in (full, nearly) for n in range(30)]
    outcomes = enrolled(manager.enroll_many(caller, people))

    # Then each is a new identity, written together (100 items a transaction: 49 identities with their
    # places and two rosters, then 11): the first transaction refused on the rosters, their room
    # read, that group written again with the two that fit, and the next one without a roster
    assert [o.existed for o in outcomes] == [False] * 60
    assert calls.names == {
        "kms GenerateDataKey": 1,
        "dynamodb BatchGetItem": 2,  # the 60 places; the two rosters' room
        "dynamodb TransactWriteItems": 3,
    }
    roster = {
        item["pk"]["S"]: item["serviceIds"]["SS"]
        for item in api.table_items("EnrollmentsTable")
        if item["kind"]["S"] == "roster"
    }
    assert len(roster[f"{caller.client_id}#roster#{full}"]) == ROSTER_LIMIT
    near = roster[f"{caller.client_id}#roster#{nearly}"]
    assert {outcomes[30].service_id, outcomes[31].service_id} <= set(near)
    assert len(near) == ROSTER_LIMIT
    # and every new identity is stored, with its PII
    store = api.container.enrollment_store
    for n in (0, 29, 31, 59):
        identity = store.get(caller.client_id, outcomes[n].service_id)
        assert identity is not None
        assert identity.pii == people[n].pii
