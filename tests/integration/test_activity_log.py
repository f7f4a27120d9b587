"""The activity table on moto, built from template.yaml: checks and change events per client, their
windows at the edges, and one client's records never counting for another. The behaviour tests run
against the unit tests' in-memory fakes too, so the fakes keep the adapter's semantics."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from phoneid.adapters.dynamodb.activity import DynamoActivityLog
from phoneid.domain.signals import ActivityCounts, ChangeEvent, ChangeKind
from phoneid.ports import ActivityLog, ChangeEventLog
from tests.fakes import FakeClock, InMemoryActivityLog, InMemoryChangeEventLog
from tests.harness import Api

PHONE = "+12025550142"
OTHER = "+12025550143"
THIRD = "+12025550144"
NAME = "noor haddad|1987-06-15"
ADDRESS = "42 quarry rd|12207"


@pytest.fixture
def api(make_api: Callable[..., Api]) -> Api:
    return make_api(tier="production")


@pytest.fixture(params=["dynamodb", "in-memory"])
def log(request: pytest.FixtureRequest) -> ActivityLog:
    """The DynamoDB adapter, and the unit tests' fake held to the same behaviour."""
    if request.param == "in-memory":
        return InMemoryActivityLog()
    api: Api = request.getfixturevalue("api")
    return api.container.activity_log


@pytest.fixture(params=["dynamodb", "in-memory"])
def events(request: pytest.FixtureRequest) -> ChangeEventLog:
    if request.param == "in-memory":
        return InMemoryChangeEventLog()
    api: Api = request.getfixturevalue("api")
    return api.container.change_events


def counts(
    log: ActivityLog, now: datetime, client: str = "client-a", phone: str = PHONE, **kw: Any
) -> ActivityCounts:
    """Counts with the default policy's windows (24 hours recent, 365 days history) ending at ``now``."""
    return log.counts(
        client,
        phone,
        kw.get("attributes", [NAME, ADDRESS]),
        recent_since=now - timedelta(hours=24),
        history_since=now - timedelta(days=365),
    )


def test_a_check_is_stored_per_number_and_per_attribute(api: Api, clock: FakeClock) -> None:
    # Given a check of a number with two attributes (one repeated)
    log = api.container.activity_log
    at = clock.now()

    # When recorded
    log.record("client-a", PHONE, [NAME, ADDRESS, NAME], at)

    # Then one item is stored for the number and one per distinct attribute (hashed), expiring in 400 days
    items = api.table_items("ActivityTable")
    by_pk = {item["pk"]["S"]: item for item in items}
    assert len(items) == 3
    name_hash = hashlib.sha256(NAME.encode()).hexdigest()
    assert set(by_pk) == {
        f"client-a#n#{PHONE}",
        f"client-a#a#{name_hash}",
        f"client-a#a#{hashlib.sha256(ADDRESS.encode()).hexdigest()}",
    }
    epoch_ms = int(at.timestamp() * 1000)
    assert by_pk[f"client-a#n#{PHONE}"]["sk"]["S"].startswith(f"{epoch_ms:013d}#")
    assert by_pk[f"client-a#a#{name_hash}"]["sk"]["S"] == f"{epoch_ms:013d}#{PHONE}"
    assert all(int(item["ttl"]["N"]) == int((at + timedelta(days=400)).timestamp()) for item in items)
    assert "noor" not in repr(items)


def test_checks_count_within_their_windows_including_the_start(log: ActivityLog, clock: FakeClock) -> None:
    # Given checks of a number at the edges of the windows ending now
    now = clock.now()
    recent_since, history_since = now - timedelta(hours=24), now - timedelta(days=365)
    for at in (
        history_since - timedelta(milliseconds=1),  # outside both windows
        history_since,  # the first moment of the history window
        recent_since - timedelta(milliseconds=1),  # history only
        recent_since,  # the first moment of the recent window
        now - timedelta(seconds=1),
    ):
        log.record("client-a", PHONE, [], at)

    # When counted
    found = counts(log, now, attributes=[])

    # Then the history window holds four checks and the recent one two
    assert found == ActivityCounts(prior=4, recent=2, recent_sharing_attributes=0)


def test_a_number_without_checks_counts_nothing(log: ActivityLog, clock: FakeClock) -> None:
    # Given no checks at all
    # When counted
    # Then every count is zero
    assert counts(log, clock.now()) == ActivityCounts(prior=0, recent=0, recent_sharing_attributes=0)


def test_other_numbers_sharing_an_attribute_count_once_each_in_the_recent_window(
    log: ActivityLog, clock: FakeClock
) -> None:
    # Given recent checks of other numbers with the same name (twice for one) or address, one of the
    # number itself, and one old check of a third number with the same name
    now = clock.now()
    log.record("client-a", OTHER, [NAME], now - timedelta(hours=1))
    log.record("client-a", OTHER, [NAME, ADDRESS], now - timedelta(hours=2))
    log.record("client-a", THIRD, [ADDRESS], now - timedelta(hours=24))  # the window's first moment
    log.record("client-a", PHONE, [NAME, ADDRESS], now - timedelta(hours=3))
    log.record("client-a", "+12025550145", [NAME], now - timedelta(hours=24, milliseconds=1))
    log.record("client-a", "+12025550146", ["someone else"], now - timedelta(hours=1))

    # When the number is counted with its name and address
    found = counts(log, now)

    # Then the two other numbers seen recently with them count, each once; the number itself does not
    assert found.recent_sharing_attributes == 2
    assert (found.prior, found.recent) == (1, 1)


def test_one_clients_activity_never_counts_for_another(log: ActivityLog, clock: FakeClock) -> None:
    # Given client B's checks of the same number, and of another number with the same attributes
    now = clock.now()
    log.record("client-b", PHONE, [NAME, ADDRESS], now - timedelta(hours=1))
    log.record("client-b", OTHER, [NAME, ADDRESS], now - timedelta(hours=1))

    # When client A counts the number
    found_a = counts(log, now, client="client-a")
    found_b = counts(log, now, client="client-b")

    # Then A sees nothing, and B sees its own
    assert found_a == ActivityCounts(prior=0, recent=0, recent_sharing_attributes=0)
    assert found_b == ActivityCounts(prior=1, recent=1, recent_sharing_attributes=1)


def test_reads_never_reach_past_the_retention(api: Api, clock: FakeClock) -> None:
    # Given a check 401 days ago (expired; DynamoDB's TTL deletes lazily, moto's never)
    log = api.container.activity_log
    now = clock.now()
    log.record("client-a", PHONE, [NAME], now - timedelta(days=401))
    log.record("client-a", PHONE, [NAME], now - timedelta(days=399))

    # When counted with a history window of 1000 days
    found = log.counts(
        "client-a",
        PHONE,
        [NAME],
        recent_since=now - timedelta(days=1000),
        history_since=now - timedelta(days=1000),
    )

    # Then only the check within the 400-day retention counts
    assert found.prior == 1
    assert found.recent == 1
    assert len(api.table_items("ActivityTable")) == 4


class _SmallPages:
    """The real client, answering each Query two items at a time."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.queries = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def query(self, **kwargs: Any) -> dict[str, Any]:
        self.queries += 1
        return dict(self._client.query(Limit=2, **kwargs))


def test_counts_read_every_page(api: Api, clock: FakeClock) -> None:
    # Given seven recent checks of a number and of three other numbers sharing its name, read two per page
    client = _SmallPages(api.container.dynamodb)
    log = DynamoActivityLog(client, api.stack.physical_ids["ActivityTable"], clock)
    now = clock.now()
    for minutes in range(7):
        log.record("client-a", PHONE, [NAME], now - timedelta(minutes=minutes + 1))
    for number in (OTHER, THIRD, "+12025550145"):
        log.record("client-a", number, [NAME], now - timedelta(minutes=30))

    # When counted
    found = counts(log, now, attributes=[NAME])

    # Then every page was read
    assert found == ActivityCounts(prior=7, recent=7, recent_sharing_attributes=3)
    assert client.queries > 3


# --- change events ------------------------------------------------------------------------------


def event(event_id: str, occurred_at: datetime, client: str = "client-a", **fields: Any) -> ChangeEvent:
    return ChangeEvent(
        event_id=event_id,
        kind=fields.pop("kind", ChangeKind.SIM_SWAP),
        phone_number=fields.pop("phone_number", PHONE),
        occurred_at=occurred_at,
        client_id=client,
        **fields,
    )


def test_change_events_are_stored_once_and_read_back_whole(events: ChangeEventLog, clock: FakeClock) -> None:
    # Given a port event with every field, appended twice (a retried delivery)
    now = clock.now()
    port = event(
        "evt-1",
        now - timedelta(days=2),
        kind=ChangeKind.PORT,
        service_id="svc-1",
        client_customer_id="cust-9",
        description="ported to another carrier",
    )

    # When appended twice and read back
    events.append([port])
    events.append([port, port])
    found = events.since("client-a", PHONE, now - timedelta(days=30))

    # Then it is read back once, as written
    assert found == [port]


def test_a_change_event_is_one_item_under_client_and_number(api: Api, clock: FakeClock) -> None:
    # Given an event appended twice
    port = event("evt-1", clock.now() - timedelta(days=2), kind=ChangeKind.PORT)

    # When appended
    api.container.change_events.append([port, port])

    # Then it is one item, keyed by client and number, sorted by when it occurred
    [item] = api.table_items("ActivityTable")
    assert item["pk"]["S"] == f"client-a#e#{PHONE}"
    assert item["sk"]["S"] == f"{int(port.occurred_at.timestamp() * 1000):013d}#evt-1"


def test_change_events_since_a_moment_include_it_and_come_oldest_first(
    events: ChangeEventLog, clock: FakeClock
) -> None:
    # Given events before, at and after the start of a 30-day window, appended out of order
    now = clock.now()
    since = now - timedelta(days=30)
    before = event("evt-before", since - timedelta(milliseconds=1), kind=ChangeKind.DISCONNECT)
    at_start = event("evt-start", since)
    latest = event("evt-latest", now - timedelta(hours=1), kind=ChangeKind.PHONE_NUMBER_CHANGE)
    events.append([latest, before, at_start])

    # When read since the window's start
    found = events.since("client-a", PHONE, since)

    # Then the events from its first moment on are returned, oldest first
    assert [e.event_id for e in found] == ["evt-start", "evt-latest"]


def test_one_clients_change_events_are_not_anothers(events: ChangeEventLog, clock: FakeClock) -> None:
    # Given events of client B on the number, and of client A on another number
    now = clock.now()
    events.append([event("evt-b", now - timedelta(hours=1), client="client-b")])
    events.append([event("evt-a-other", now - timedelta(hours=1), phone_number=OTHER)])

    # When client A reads the number's events
    # Then it sees none; B sees its own
    assert events.since("client-a", PHONE, now - timedelta(days=30)) == []
    assert [e.event_id for e in events.since("client-b", PHONE, now - timedelta(days=30))] == ["evt-b"]


def test_many_change_events_are_appended_in_batches(events: ChangeEventLog, clock: FakeClock) -> None:
    # Given 60 events of one number (more than two BatchWriteItem calls of 25)
    now = clock.now()
    batch = [event(f"evt-{n:02d}", now - timedelta(minutes=n)) for n in range(60)]

    # When appended
    events.append(batch)

    # Then all are read back
    assert len(events.since("client-a", PHONE, now - timedelta(days=1))) == 60
