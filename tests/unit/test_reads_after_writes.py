"""What a read right after a write sees, on the in-memory store that follows the adapter's rules
(its indexes held behind as ``tests/index_lag.py`` holds moto's), and how a bulk enrollment names
the identities a refused roster concerns (docs/identity-manager.md#reads-right-after-a-write)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from phoneid.adapters.dynamodb.enrollments.bulk import BulkEnrollment, _Free
from phoneid.adapters.dynamodb.enrollments.items import Cancelled, EnrollmentTable
from phoneid.domain.clients import Caller, Solution
from phoneid.domain.enrollment import ROSTER_LIMIT, Enrollment, Pii, new_service_id
from phoneid.domain.errors import IdentityNotFound
from phoneid.services.identity_manager import Enrollee, IdentityManager
from tests.fakes import START, FakeClock, InMemoryEnrollmentStore, enrolled_by_verify
from tests.unit.helpers import LocalMac

CALLER = Caller(client_id="client-a", solution=Solution.IDENTITY)
OTHER = Caller(client_id="client-b", solution=Solution.IDENTITY)
PHONE = "+12025550123"


def manager() -> tuple[IdentityManager, InMemoryEnrollmentStore, FakeClock]:
    store, clock = InMemoryEnrollmentStore(), FakeClock()
    return IdentityManager(store=store, clock=clock, region="US", page_mac=LocalMac()), store, clock


def looked_up(identities: IdentityManager, caller: Caller, phone: str = PHONE) -> list[str]:
    try:
        return [item.serviceId for item in identities.lookup(caller, phone).items]
    except IdentityNotFound:
        return []


def listed(identities: IdentityManager, caller: Caller) -> list[str]:
    return [item.serviceId for item in identities.list_page(caller, limit=1000, show_inactive=True).results]


def test_lookup_and_history_see_an_enrollment_at_once_and_the_list_once_the_index_caught_up() -> None:
    # Given one identity of a number
    identities, store, clock = manager()
    first = enrolled_by_verify(identities, CALLER, PHONE, "customer-1").service_id

    with store.indexes_behind():
        # When a second customer of the number is enrolled while the indexes lag
        clock.advance(seconds=1)
        second = enrolled_by_verify(identities, CALLER, PHONE, "customer-2").service_id

        # Then lookup finds both, the history counts both, and the list shows the first alone
        assert looked_up(identities, CALLER) == [first, second]
        history = store.history(CALLER.client_id, PHONE, clock.now() - timedelta(milliseconds=500))
        assert (history.identities, history.short_tenure_identities) == (2, 1)
        assert listed(identities, CALLER) == [first]
        # and another client sees none of them
        assert looked_up(identities, OTHER) == []

    # and once the indexes have caught up, the list has the second too
    assert listed(identities, CALLER) == [first, second]


def test_lookup_sees_a_deactivation_or_a_disenrollment_at_once_the_list_as_it_stood() -> None:
    # Given two identities of a number
    identities, store, clock = manager()
    kept = enrolled_by_verify(identities, CALLER, PHONE, "c-1").service_id
    clock.advance(seconds=1)
    gone = enrolled_by_verify(identities, CALLER, PHONE, "c-2").service_id

    with store.indexes_behind():
        # When one is deactivated and the other disenrolled while the indexes lag
        identities.deactivate(CALLER, kept)
        identities.disenroll(CALLER, gone)

        # Then lookup shows them as they are now, the list as they stood
        assert [(i.serviceId, i.active) for i in identities.lookup(CALLER, PHONE).items] == [(kept, False)]
        page = identities.list_page(CALLER, limit=10, show_inactive=True).results
        assert [(i.serviceId, i.active) for i in page] == [(kept, True), (gone, True)]


def test_past_the_rosters_limit_lookup_finds_a_new_identity_once_the_index_caught_up() -> None:
    # Given a number with as many of the client's identities as its roster holds
    identities, store, _ = manager()
    full = [Enrollee(PHONE, f"full-{n}", Pii()) for n in range(ROSTER_LIMIT)]
    identities.enroll_many(CALLER, full)

    with store.indexes_behind():
        # When one more is enrolled while the indexes lag
        extra = enrolled_by_verify(identities, CALLER, PHONE, "one-more").service_id

        # Then lookup does not find it yet
        assert len(looked_up(identities, CALLER)) == ROSTER_LIMIT
        assert extra not in looked_up(identities, CALLER)

    # and does once the indexes have caught up
    assert extra in looked_up(identities, CALLER)


def test_the_last_disenrollment_of_a_number_drops_its_roster() -> None:
    identities, store, _ = manager()
    service_id = enrolled_by_verify(identities, CALLER, PHONE, None).service_id
    assert store.rosters == {(CALLER.client_id, PHONE): {service_id}}

    identities.disenroll(CALLER, service_id)

    assert store.rosters == {}


# --- the bulk path: which identities a refused item concerns ---------------------------------------


class _RefusingTable(EnrollmentTable):
    """A table whose transactions are cancelled with ``codes``, recording what they would write."""

    def __init__(self, codes: list[str]) -> None:
        super().__init__(None, "enrollments", None)  # type: ignore[arg-type]
        self.codes = codes
        self.written: list[list[dict[str, Any]]] = []

    def transact(self, items: list[dict[str, Any]], what: str) -> None:
        self.written.append(items)
        raise Cancelled(self.codes)


def enrollment(phone: str, customer: str) -> Enrollment:
    return Enrollment(
        client_id="client-a",
        service_id=new_service_id(),
        phone_number=phone,
        country="US",
        created_at=START,
        client_customer_id=customer,
    )


def test_a_group_writes_one_roster_per_number_and_a_refused_roster_names_that_number_alone() -> None:
    # Given three enrollments, two of them of one number
    group = [enrollment(PHONE, "a"), enrollment("+12025550124", "b"), enrollment(PHONE, "c")]
    # and a transaction DynamoDB cancels on the first roster (items: 3 x 2, then the rosters)
    refusing = _RefusingTable(["None"] * 6 + ["ConditionalCheckFailed", "None"])

    # When the group is written
    refused, rosters = BulkEnrollment(refusing, lambda e: (e, True))._create_group(
        group, [_Free(n) for n in range(3)], dict.fromkeys(range(3)), {}
    )

    # Then the transaction held one roster per number, with that number's identities
    written = [item["Update"] for item in refusing.written[0][6:]]
    assert [r["Key"]["pk"]["S"] for r in written] == [
        f"client-a#roster#{PHONE}",
        "client-a#roster#+12025550124",
    ]
    assert written[0]["ExpressionAttributeValues"][":ids"]["SS"] == [group[0].service_id, group[2].service_id]
    assert written[0]["ExpressionAttributeValues"][":room"]["N"] == str(ROSTER_LIMIT - 2)
    # and the refused roster names its number, no identity: the group is written again, not one by one
    assert refused == set()
    assert rosters == {("client-a", PHONE)}


def test_a_roster_with_room_for_one_takes_the_first_of_its_numbers_identities() -> None:
    # Given two enrollments of a number whose roster has room for one
    group = [enrollment(PHONE, "a"), enrollment(PHONE, "b")]
    refusing = _RefusingTable(["None"] * 5)

    # When the group is written
    BulkEnrollment(refusing, lambda e: (e, True))._create_group(
        group, [_Free(0), _Free(1)], dict.fromkeys(range(2)), {("client-a", PHONE): 1}
    )

    # Then the roster gets the first, as enrolling one after another would
    [roster] = [item["Update"] for item in refusing.written[0][4:]]
    assert roster["ExpressionAttributeValues"][":ids"]["SS"] == [group[0].service_id]
