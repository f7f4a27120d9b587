"""Identity Manager's enrollment states and transitions, and the service on an in-memory store."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest

from phoneid.api.identity_models import IdentityBatchRequest, IdentityEnrollRequest
from phoneid.domain.clients import Caller, Solution
from phoneid.domain.enrollment import (
    TOMBSTONE_LIFETIME,
    TRANSITIONS,
    Action,
    Enrollment,
    IdentityAttribute,
    Pii,
    Status,
    is_service_id,
    keeps_place,
    new_service_id,
    next_status,
    number_history,
)
from phoneid.domain.errors import IdentityNotFound, MalformedRequest, UnauthorizedForCountry
from phoneid.domain.signals import NumberHistory
from phoneid.services.identity_manager import IdentityManager
from tests.fakes import START, FakeClock, InMemoryEnrollmentStore, enrolled_by_verify
from tests.unit.helpers import LocalMac

CALLER = Caller(client_id="client-a", solution=Solution.IDENTITY)
OTHER = Caller(client_id="client-b", solution=Solution.IDENTITY)


def enrollment(**fields: object) -> Enrollment:
    values: dict[str, object] = {
        "client_id": "client-a",
        "service_id": new_service_id(),
        "phone_number": "+12025550123",
        "country": "US",
        "created_at": START,
        "pii": Pii(first_name="Ada", last_name="Lovelace", attributes=(IdentityAttribute("tier", "gold"),)),
    }
    values.update(fields)
    return Enrollment(**values)  # type: ignore[arg-type]


def manager() -> tuple[IdentityManager, InMemoryEnrollmentStore, FakeClock]:
    store, clock = InMemoryEnrollmentStore(), FakeClock()
    return IdentityManager(store=store, clock=clock, region="US", page_mac=LocalMac()), store, clock


# --- states and transitions -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "action", "expected"),
    [
        (Status.ACTIVE, Action.ACTIVATE, Status.ACTIVE),
        (Status.ACTIVE, Action.DEACTIVATE, Status.INACTIVE),
        (Status.ACTIVE, Action.DISENROLL, Status.DISENROLLED),
        (Status.INACTIVE, Action.ACTIVATE, Status.ACTIVE),
        (Status.INACTIVE, Action.DEACTIVATE, Status.INACTIVE),
        (Status.INACTIVE, Action.DISENROLL, Status.DISENROLLED),
    ],
)
def test_active_and_inactive_identities_move_as_the_table_says(
    current: Status, action: Action, expected: Status
) -> None:
    # Given an identity in ``current``; When ``action`` applies; Then it is in ``expected``
    assert next_status(current, action) == expected
    assert enrollment(status=current).apply(action, START).status == expected


@pytest.mark.parametrize("action", list(Action))
def test_a_disenrolled_identity_is_not_found_for_any_action(action: Action) -> None:
    # Given a disenrolled identity
    tombstone = enrollment().apply(Action.DISENROLL, START)

    # When anything is done to it, Then it does not exist
    with pytest.raises(IdentityNotFound):
        tombstone.apply(action, START)
    assert not tombstone.exists


def test_every_state_but_disenrolled_has_a_transition_for_every_action() -> None:
    # Then the table is complete for the states the API knows, and empty for the tombstone
    for status in (Status.ACTIVE, Status.INACTIVE):
        assert {action for (state, action) in TRANSITIONS if state == status} == set(Action)
    assert not [key for key in TRANSITIONS if key[0] == Status.DISENROLLED]


def test_disenrolling_drops_the_pii_and_expires_the_tombstone_after_30_days() -> None:
    # Given an identity with names and attributes
    identity = enrollment(client_customer_id="customer-1")

    # When it is disenrolled
    later = START + timedelta(days=3)
    tombstone = identity.apply(Action.DISENROLL, later)

    # Then no PII is left, and the tombstone expires 30 days later
    assert tombstone.pii == Pii()
    assert tombstone.status == Status.DISENROLLED
    assert tombstone.updated_at == later
    assert tombstone.expires_at == later + TOMBSTONE_LIFETIME == later + timedelta(days=30)


def test_deactivating_keeps_the_pii_and_activating_brings_it_back_to_active() -> None:
    identity = enrollment()

    inactive = identity.apply(Action.DEACTIVATE, START)
    active = inactive.apply(Action.ACTIVATE, START)

    assert (inactive.active, inactive.exists, inactive.pii) == (False, True, identity.pii)
    assert active.active


def test_service_ids_are_random_canonical_uuids() -> None:
    ids = {new_service_id() for _ in range(50)}

    assert len(ids) == 50
    assert all(is_service_id(i) for i in ids)
    assert not is_service_id("client-a#customer#1")
    assert not is_service_id(new_service_id().upper())
    assert not is_service_id("")


# --- the service on an in-memory store --------------------------------------------------------


def test_the_same_customer_enrolled_twice_is_one_identity_and_verify_learns_it_existed() -> None:
    # Given an identity enrolled for customer-7
    service, _, _ = manager()
    first = service.enroll(CALLER, IdentityEnrollRequest(phoneNumber="+12025550123", clientCustomerId="c-7"))

    # When the same customer is enrolled again (the API, then verify)
    again = service.enroll(CALLER, IdentityEnrollRequest(phoneNumber="+12025550123", clientCustomerId="c-7"))
    from_verify = enrolled_by_verify(service, CALLER, "+12025550123", "c-7")
    new = enrolled_by_verify(service, CALLER, "+12025550124", "c-8")

    # Then every answer names the first identity; verify learns whether it existed
    assert again.serviceId == first.serviceId == from_verify.service_id
    assert from_verify.existed is True
    assert new.existed is False
    assert new.service_id != first.serviceId


def test_without_a_customer_id_an_active_identity_of_the_number_is_reused_an_inactive_one_is_not() -> None:
    service, _, _ = manager()
    first = service.enroll(CALLER, IdentityEnrollRequest(phoneNumber="+12025550123")).serviceId

    again = service.enroll(CALLER, IdentityEnrollRequest(phoneNumber="+12025550123")).serviceId
    service.deactivate(CALLER, first)
    after_deactivation = service.enroll(CALLER, IdentityEnrollRequest(phoneNumber="+12025550123")).serviceId

    assert again == first
    assert after_deactivation != first


def test_numbers_go_through_the_same_checks_as_every_endpoint() -> None:
    service, _, _ = manager()

    with pytest.raises(MalformedRequest) as invalid:
        service.enroll(CALLER, IdentityEnrollRequest(phoneNumber="12"))
    with pytest.raises(UnauthorizedForCountry):
        service.enroll(CALLER, IdentityEnrollRequest(phoneNumber="+447911123456"))
    restricted = Caller(client_id="client-a", solution=Solution.IDENTITY, allowed_countries=frozenset({"CA"}))
    with pytest.raises(UnauthorizedForCountry):
        service.enroll(restricted, IdentityEnrollRequest(phoneNumber="+12025550123"))

    assert invalid.value.parameters == ["phoneNumber"]


def test_a_batch_answers_each_item_in_order() -> None:
    service, _, _ = manager()
    request = IdentityBatchRequest.model_validate(
        {"items": [{"phoneNumber": "+12025550123"}, {"phoneNumber": "nope"}, {"name": "x"}]}
    )

    results = service.enroll_batch(CALLER, request).model_dump()["results"]

    assert is_service_id(results[0]["serviceId"])
    assert results[1] == {
        "error": "Invalid parameters: phoneNumber: must be a phone number with country code, "
        "e.g. +12025550123"
    }
    assert results[2] == {
        "error": "Invalid parameters: name: Extra inputs are not permitted; phoneNumber: Field required"
    }


def test_another_client_sees_nothing_and_changes_nothing() -> None:
    service, store, _ = manager()
    mine = service.enroll(CALLER, IdentityEnrollRequest(phoneNumber="+12025550123")).serviceId

    for call in (service.get, service.activate, service.deactivate, service.disenroll):
        with pytest.raises(IdentityNotFound):
            call(OTHER, mine)
    with pytest.raises(IdentityNotFound):
        service.lookup(OTHER, "+12025550123")

    assert service.list_page(OTHER, limit=10).model_dump() == {}
    assert store.get("client-a", mine) is not None


def test_history_counts_active_identities_and_dates_every_one_still_held() -> None:
    # Given three identities of one number, enrolled 40, 10 and 2 days ago; the oldest deactivated
    service, store, clock = manager()
    ids = []
    for customer, days_ago in (("c-1", 40), ("c-2", 10), ("c-3", 2)):
        clock.current = START - timedelta(days=days_ago)
        ids.append(enrolled_by_verify(service, CALLER, "+12025550123", customer).service_id)
    service.deactivate(CALLER, ids[0])

    # When the fraud policy asks with a 7-day short-tenure window
    history = store.history("client-a", "+12025550123", START - timedelta(days=7))

    # Then two are active, one of them recent; the first association is the oldest enrollment
    assert history.identities == 2
    assert history.short_tenure_identities == 1
    assert history.first_associated == (START - timedelta(days=40)).date()
    assert history.last_associated == START - timedelta(days=2)


def test_a_numbers_history_counts_its_active_identities_and_dates_every_one_held() -> None:
    # Given three identities held on one number, enrolled 40, 10 and 2 days ago; the oldest inactive
    held = [
        enrollment(created_at=START - timedelta(days=40), status=Status.INACTIVE),
        enrollment(created_at=START - timedelta(days=10)),
        enrollment(created_at=START - timedelta(days=2)),
    ]

    # When the fraud policy's history is taken with a 7-day short-tenure window
    history = number_history(held, START - timedelta(days=7))

    # Then (the rule the DynamoDB store and the in-memory one share) two count, one of them recent
    assert history == NumberHistory(
        identities=2,
        short_tenure_identities=1,
        first_associated=(START - timedelta(days=40)).date(),
        last_associated=START - timedelta(days=2),
    )


def test_a_number_nobody_holds_has_no_history() -> None:
    assert number_history([], START) == NumberHistory(
        identities=0, short_tenure_identities=0, first_associated=None, last_associated=None
    )


@pytest.mark.parametrize(
    ("holder_status", "newcomer_customer", "kept"),
    [
        (Status.ACTIVE, "c-1", True),
        (Status.INACTIVE, "c-1", True),
        (Status.ACTIVE, None, True),
        (Status.INACTIVE, None, False),
        (Status.DISENROLLED, "c-1", False),
        (Status.DISENROLLED, None, False),
    ],
)
def test_a_place_stays_with_its_identity_unless_inactive_without_a_customer_id_or_gone(
    holder_status: Status, newcomer_customer: str | None, kept: bool
) -> None:
    holder = enrollment(status=holder_status, client_customer_id=newcomer_customer)
    newcomer = enrollment(client_customer_id=newcomer_customer)

    assert keeps_place(holder, newcomer) is kept


# --- list page keys ------------------------------------------------------------------------------


def test_pages_go_through_every_identity_with_the_keys_they_give() -> None:
    # Given seven identities
    service, _, clock = manager()
    enrolled = []
    for index in range(7):
        enrolled.append(
            service.enroll(CALLER, IdentityEnrollRequest(phoneNumber=f"+1202555{index:04d}")).serviceId
        )
        clock.advance(seconds=1)

    # When the client pages three at a time, each time with the lastKey it was given
    pages = [service.list_page(CALLER, limit=3)]
    while pages[-1].lastKey is not None:
        pages.append(service.list_page(CALLER, limit=3, start_key=pages[-1].lastKey))

    # Then three pages hold every identity once, in order
    assert [len(page.results or []) for page in pages] == [3, 3, 1]
    assert [r.serviceId for page in pages for r in page.results or []] == enrolled


def key_fields(key: str) -> dict[str, str]:
    fields: dict[str, str] = json.loads(base64.urlsafe_b64decode(key + "=" * (-len(key) % 4)))
    return fields


def spelled(fields: dict[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "alter",
    [
        pytest.param(lambda key: spelled({**key_fields(key), "k": "someone-else"}), id="position"),
        pytest.param(lambda key: spelled({**key_fields(key), "m": "A" * 44}), id="mac"),
        pytest.param(lambda key: spelled({"c": "client-a", "k": key_fields(key)["k"]}), id="no-mac"),
        pytest.param(lambda key: key[:10] + "!" + key[10:], id="a-character-base64-ignores"),
        pytest.param(lambda key: key + "==", id="padded"),
        pytest.param(lambda key: json.dumps(key_fields(key)), id="json-itself"),
        pytest.param(lambda key: spelled({**key_fields(key), "extra": "x"}), id="another-field"),
    ],
)
def test_a_start_key_that_is_not_exactly_one_given_is_refused(alter: object) -> None:
    # Given a lastKey of client-a
    service, _, _ = manager()
    for index in range(3):
        service.enroll(CALLER, IdentityEnrollRequest(phoneNumber=f"+1202555{index:04d}"))
    key = service.list_page(CALLER, limit=1).lastKey
    assert key is not None

    # When it comes back changed in any way, then it is 8001 naming startKey
    with pytest.raises(MalformedRequest) as refused:
        service.list_page(CALLER, limit=1, start_key=alter(key))  # type: ignore[operator]
    assert refused.value.parameters == ["startKey"]


def test_a_start_key_given_to_another_client_is_refused() -> None:
    service, _, _ = manager()
    for index, caller in enumerate((CALLER, CALLER, OTHER, OTHER)):
        enrolled_by_verify(service, caller, f"+1202555{index:04d}", None)
    others_key = service.list_page(OTHER, limit=1).lastKey
    assert others_key is not None

    with pytest.raises(MalformedRequest):
        service.list_page(CALLER, limit=1, start_key=others_key)
    with pytest.raises(MalformedRequest):
        service.list_page(CALLER, limit=1, start_key=spelled({**key_fields(others_key), "c": "client-a"}))


class _FailingPush:
    """Push subscriptions whose store is down: every call raises."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def subscribe(self, enrollment: Enrollment) -> None:
        self.calls.append("subscribe")
        raise RuntimeError("push subscriptions table unavailable")

    def unsubscribe(self, client_id: str, service_id: str) -> None:
        self.calls.append("unsubscribe")
        raise RuntimeError("push subscriptions table unavailable")


def test_a_push_failure_never_fails_the_enrollment_or_the_change_it_follows() -> None:
    # Given Identity Manager on a pushing stack whose subscriptions cannot be written
    store, clock = InMemoryEnrollmentStore(), FakeClock()
    push = _FailingPush()
    identities = IdentityManager(
        store=store,
        clock=clock,
        region="US",
        page_mac=LocalMac(),
        push=push,  # type: ignore[arg-type]
    )

    # When an identity is enrolled, deactivated, activated and disenrolled
    enrolled = identities.enroll(CALLER, IdentityEnrollRequest(phoneNumber="+12025550123"))
    service_id = enrolled.serviceId
    results = [
        identities.deactivate(CALLER, service_id).success,
        identities.activate(CALLER, service_id).success,
        identities.disenroll(CALLER, service_id).success,
    ]

    # Then every call answered its success and made its change; push was asked each time
    assert results == [True, True, True]
    assert store.get(CALLER.client_id, service_id) is None
    assert push.calls == ["subscribe", "unsubscribe", "subscribe", "unsubscribe"]
