"""What a read right after a write sees while the table's indexes lag (``tests/index_lag.py``): lookup
and a number's history see every enrollment, change and disenrollment at once (the number's roster,
and each identity read again from the table); the list shows the index as it stood until it catches
up (docs/identity-manager.md#reads-right-after-a-write)."""

from __future__ import annotations

import itertools
from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any

import boto3
import pytest

from phoneid.domain.clients import Caller, Solution
from phoneid.domain.enrollment import ROSTER_LIMIT
from tests.fakes import enrolled_by_verify
from tests.harness import Api
from tests.identities import Identities
from tests.index_lag import behind

_numbers = itertools.count(5000)


def new_number() -> str:
    """A valid US number no other test of this module uses."""
    return f"+1202555{next(_numbers):04d}"


def lagging(api: Api) -> AbstractContextManager[None]:
    """The enrollments table's indexes held where they stand now, until the block ends."""
    return behind(api.stack.physical_ids["EnrollmentsTable"])


def looked_up(identities: Identities, phone: str) -> list[str]:
    answer = identities.lookup(phone)
    if answer.status == 404:
        return []
    assert answer.status == 200, answer.body
    return [item["serviceId"] for item in answer.json()["items"]]


def listed(identities: Identities) -> list[str]:
    return [
        item["serviceId"]
        for page in identities.every_page(showInactive="true")
        for item in page.get("results", [])
    ]


def indexed(api: Api, client_id: str, phone: str) -> list[str]:
    """What the byPhone index itself answers for the client's number now."""
    items = boto3.client("dynamodb").query(
        TableName=api.stack.physical_ids["EnrollmentsTable"],
        IndexName="byPhone",
        KeyConditionExpression="phoneKey = :key",
        ExpressionAttributeValues={":key": {"S": f"{client_id}#{phone}"}},
    )["Items"]
    return [item["serviceId"]["S"] for item in items]


def rosters(api: Api) -> list[dict[str, Any]]:
    return [item for item in api.table_items("EnrollmentsTable") if item["kind"]["S"] == "roster"]


# --- the seam itself ------------------------------------------------------------------------------


def test_an_index_held_behind_misses_what_was_written_since_and_then_catches_up(
    api: Api, alice: Identities
) -> None:
    # Given one identity of a number
    phone = new_number()
    first = alice.enrolled(phoneNumber=phone, clientCustomerId="seam-1")

    # When a second is enrolled while the index lags
    with lagging(api):
        second = alice.enrolled(phoneNumber=phone, clientCustomerId="seam-2")
        during = indexed(api, alice.integrator.client_id, phone)

    # Then the index answered without it, and has it once caught up
    assert during == [first]
    assert sorted(indexed(api, alice.integrator.client_id, phone)) == sorted([first, second])


# --- lookup ---------------------------------------------------------------------------------------


def test_lookup_right_after_enroll_finds_the_identity_the_index_does_not_have_yet(
    api: Api, alice: Identities
) -> None:
    # Given a number with one identity, and the index lagging
    phone = new_number()
    first = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-1")
    with lagging(api):
        # When a second customer, then a first identity of another number, are enrolled
        api.clock.advance(seconds=1)
        second = alice.enrolled(phoneNumber=phone, clientCustomerId="customer-2", deviceId="device-0002")
        other = new_number()
        api.clock.advance(seconds=1)
        only = alice.enrolled(phoneNumber=other)

        # Then lookup finds each at once, oldest first, with what GET shows
        answer = alice.lookup(phone)
        assert answer.status == 200, answer.body
        assert [item["serviceId"] for item in answer.json()["items"]] == [first, second]
        assert answer.json()["items"][1] == alice.get(second).json()
        assert looked_up(alice, other) == [only]
        # while the list shows the index as it stood
        assert listed(alice) == [first]

    # and once the index has caught up the list has them too
    assert listed(alice) == [first, second, only]


def test_lookup_right_after_a_batch_finds_every_identity_of_the_number(api: Api, alice: Identities) -> None:
    # Given the index lagging
    phone = new_number()
    with lagging(api):
        # When a batch enrolls three customers of one number and one of another
        answer = alice.batch(
            [{"phoneNumber": phone, "clientCustomerId": f"batch-{n}"} for n in range(3)]
            + [{"phoneNumber": new_number()}]
        )
        assert answer.status == 200, answer.body
        ids = [result["serviceId"] for result in answer.json()["results"]]

        # Then lookup of the number finds the three at once
        assert sorted(looked_up(alice, phone)) == sorted(ids[:3])


def test_lookup_right_after_a_change_or_a_disenroll_sees_it(api: Api, alice: Identities) -> None:
    # Given two identities of a number
    phone = new_number()
    kept = alice.enrolled(phoneNumber=phone, clientCustomerId="change-1")
    gone = alice.enrolled(phoneNumber=phone, clientCustomerId="change-2")

    with lagging(api):
        # When one is deactivated and the other disenrolled while the index lags
        alice.deactivate(kept)
        alice.disenroll(gone)

        # Then lookup shows the first inactive and no longer the second, as the index still has both
        items = alice.lookup(phone).json()["items"]
        assert [(item["serviceId"], item["active"]) for item in items] == [(kept, False)]
        assert sorted(indexed(api, alice.integrator.client_id, phone)) == sorted([kept, gone])
        # and once the last one is disenrolled the number is 8011
        alice.disenroll(kept)
        assert (alice.lookup(phone).status, alice.lookup(phone).json().get("code")) == (404, 8011)


def test_a_lookup_while_the_index_lags_never_shows_another_clients_identity(
    api: Api, alice: Identities, bob: Identities
) -> None:
    # Given Alice's identity of a number
    phone = new_number()
    alices = alice.enrolled(phoneNumber=phone, clientCustomerId="tenant-1")

    with lagging(api):
        # When Bob enrolls the same number and customer id while the index lags
        bobs = bob.enrolled(phoneNumber=phone, clientCustomerId="tenant-1")

        # Then each finds only their own
        assert looked_up(alice, phone) == [alices]
        assert looked_up(bob, phone) == [bobs]


def test_an_identity_enrolled_before_rosters_existed_is_found_through_the_index(
    api: Api, alice: Identities
) -> None:
    # Given an identity whose number has no roster (enrolled before rosters were written)
    phone = new_number()
    service_id = alice.enrolled(phoneNumber=phone)
    (roster,) = [item for item in rosters(api) if item["pk"]["S"].endswith(phone)]
    boto3.client("dynamodb").delete_item(
        TableName=api.stack.physical_ids["EnrollmentsTable"], Key={"pk": roster["pk"]}
    )

    # When the number is looked up
    found = looked_up(alice, phone)

    # Then the index finds it
    assert found == [service_id]


# --- the roster's limit ---------------------------------------------------------------------------


def test_past_the_rosters_limit_a_new_identity_shows_once_the_index_has_caught_up(
    api: Api, alice: Identities
) -> None:
    # Given a number with as many identities of the client as its roster holds
    phone = new_number()
    full = alice.batch([{"phoneNumber": phone, "clientCustomerId": f"full-{n}"} for n in range(ROSTER_LIMIT)])
    assert full.status == 200
    assert len(full.json()["results"]) == ROSTER_LIMIT

    with lagging(api):
        # When one more is enrolled while the index lags
        extra = alice.enrolled(phoneNumber=phone, clientCustomerId="one-more")

        # Then it is enrolled, but lookup does not find it yet (docs/identity-manager.md)
        assert alice.get(extra).status == 200
        assert len(looked_up(alice, phone)) == ROSTER_LIMIT
        assert extra not in looked_up(alice, phone)

    # and does once the index has caught up
    assert len(looked_up(alice, phone)) == ROSTER_LIMIT + 1
    assert extra in looked_up(alice, phone)

    # and when one of the hundred is disenrolled, the next one enrolled is found at once again
    alice.disenroll(full.json()["results"][0]["serviceId"])
    with lagging(api):
        again = alice.enrolled(phoneNumber=phone, clientCustomerId="room-again")
        assert again in looked_up(alice, phone)


# --- the roster holds no number the client no longer has ------------------------------------------


def test_disenrolling_a_numbers_last_identity_deletes_its_roster(api: Api, alice: Identities) -> None:
    # Given two identities of a number, and its roster listing both
    phone = new_number()
    ids = [alice.enrolled(phoneNumber=phone, clientCustomerId=f"last-{n}") for n in range(2)]
    (roster,) = [item for item in rosters(api) if item["pk"]["S"].endswith(phone)]
    assert roster["pk"]["S"] == f"{alice.integrator.client_id}#roster#{phone}"
    assert sorted(roster["serviceIds"]["SS"]) == sorted(ids)

    # When the first is disenrolled, then the second
    alice.disenroll(ids[0])
    after_first = [item["serviceIds"]["SS"] for item in rosters(api) if item["pk"]["S"].endswith(phone)]
    alice.disenroll(ids[1])

    # Then the roster listed the second alone, and then no item of the table holds the number
    assert after_first == [[ids[1]]]
    assert phone not in repr(api.table_items("EnrollmentsTable"))


# --- the number's history (fraud policy) ----------------------------------------------------------


@pytest.fixture
def caller(api: Api) -> Caller:
    return Caller(client_id=api.create_client().client_id, solution=Solution.IDENTITY)


def test_the_numbers_history_counts_an_identity_enrolled_a_moment_ago(api: Api, caller: Caller) -> None:
    # Given a number enrolled by verify a day ago
    manager, store = api.container.identity_manager, api.container.enrollment_store
    phone = new_number()
    api.clock.advance(days=-1)
    enrolled_by_verify(manager, caller, phone, "history-1")
    api.clock.advance(days=1)

    with lagging(api):
        # When verify enrolls another customer of it and the fraud policy reads its history at once
        enrolled_by_verify(manager, caller, phone, "history-2")
        history = store.history(caller.client_id, phone, api.clock.now() - timedelta(hours=1))

    # Then both identities count, the new one as of short tenure
    assert (history.identities, history.short_tenure_identities) == (2, 1)
    assert history.last_associated == api.clock.now()
