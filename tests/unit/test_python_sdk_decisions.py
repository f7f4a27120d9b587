"""The Python server SDK's calls of decision records (clients/python) against a fake transport answering
with the API's own bodies: every record across the list's pages, one record by an id that needs
escaping, the summary and the erasure."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from itertools import islice
from typing import Any

import httpx
import pytest
from phoneid_client import BadRequestError, NotFoundError

from phoneid.api.decision_models import (
    Conversion,
    DayCounts,
    DecisionEraseResponse,
    DecisionListResponse,
    DecisionSummaryItem,
    DecisionSummaryResponse,
    DecisionView,
    NumberShown,
)
from phoneid.domain import errors as domain
from phoneid.services.decisions import DecisionNotFound
from tests.fakes import FakeClock
from tests.unit.test_python_sdk_client import FakeApi, as_the_api_answers, make_client

BATCH_ITEM = "c0a9f1d2-5b8e-4a57-9d1e-3f6b2c7a8e90#3"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def item(number: int) -> DecisionSummaryItem:
    return DecisionSummaryItem(
        id=f"d-{number}",
        kind="verify",
        flow="humanAssurance",
        startedAt="2026-12-01T10:00:00.000Z",
        endedAt="2026-12-01T10:00:01.000Z",
        outcome="pass",
        success=True,
        number=NumberShown(country="US", lastTwo="12"),
    )


def pages(*answers: DecisionListResponse) -> Callable[[httpx.Request], httpx.Response]:
    """The list's pages in order, each dumped as the API sends it (an empty page has no results)."""
    remaining = iter(answers)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=next(remaining).model_dump(mode="json"))

    return answer


def query(request: httpx.Request) -> dict[str, str]:
    return dict(request.url.params)


# --- The list, across its pages ---


def test_the_list_yields_every_record_of_every_page_then_stops_at_the_page_without_last_key(
    clock: FakeClock,
) -> None:
    api = FakeApi(
        pages(
            DecisionListResponse(results=[item(1), item(2)], lastKey="k1"),
            DecisionListResponse(results=[], lastKey="k2"),  # a sparse filter: an empty page, not the end
            DecisionListResponse(results=[item(3)]),
        )
    )
    with make_client(api, clock) as client:
        records = list(client.list_decisions(kind="verify", limit=2))

    assert [record.id for record in records] == ["d-1", "d-2", "d-3"]
    assert records[0].number is not None
    assert records[0].number.lastTwo == "12"
    assert [query(call).get("startKey") for call in api.calls()] == [None, "k1", "k2"]
    assert all(query(call)["kind"] == "verify" and query(call)["limit"] == "2" for call in api.calls())


def test_the_list_asks_for_nothing_before_it_is_read_and_for_no_page_past_what_is_read(
    clock: FakeClock,
) -> None:
    api = FakeApi(
        pages(
            DecisionListResponse(results=[item(1), item(2)], lastKey="k1"),
            DecisionListResponse(results=[item(3)]),
        )
    )
    with make_client(api, clock) as client:
        records = client.list_decisions()
        assert api.calls() == []

        first_two = [record.id for record in islice(records, 2)]

    assert first_two == ["d-1", "d-2"]
    assert len(api.calls()) == 1


def test_every_filter_is_sent_under_the_apis_name_and_only_those_set(clock: FakeClock) -> None:
    api = FakeApi(pages(DecisionListResponse(results=[]), DecisionListResponse(results=[])))
    with make_client(api, clock) as client:
        list(
            client.list_decisions(
                from_=datetime(2026, 11, 1, tzinfo=UTC),
                to="2026-12-01T00:00:00Z",
                phone_number="+12025550112",
                kind="verify-batch",
                outcome="fail",
                reason_code=9135,
                client_request_id="req-9",
                limit=100,
                start_key="saved-key",
            )
        )
        list(client.list_decisions())

    full, bare = api.calls()
    assert (full.method, full.url.path) == ("GET", "/v3/decisions")
    assert query(full) == {
        "from": "2026-11-01T00:00:00+00:00",
        "to": "2026-12-01T00:00:00Z",
        "phoneNumber": "+12025550112",
        "kind": "verify-batch",
        "outcome": "fail",
        "reasonCode": "9135",
        "clientRequestId": "req-9",
        "limit": "100",
        "startKey": "saved-key",
    }
    assert b"phoneNumber=%2B12025550112" in full.url.query  # not a space
    assert query(bare) == {}


def test_a_refused_page_raises_when_the_iteration_reaches_it(clock: FakeClock) -> None:
    first = DecisionListResponse(results=[item(1)], lastKey="tampered")

    def answer(request: httpx.Request) -> httpx.Response:
        if "startKey" not in query(request):
            return httpx.Response(200, json=first.model_dump(mode="json"))
        return as_the_api_answers(domain.MalformedRequest(problems={"startKey": "is not a key of this list"}))

    api = FakeApi(answer)
    with make_client(api, clock) as client:
        records = client.list_decisions()
        assert next(records).id == "d-1"
        with pytest.raises(BadRequestError) as raised:
            next(records)

    assert (raised.value.status, raised.value.code) == (400, 8001)
    assert "startKey" in raised.value.message


# --- One record ---


def test_a_record_is_read_by_its_id_with_the_hash_of_a_batch_item_escaped(clock: FakeClock) -> None:
    view = DecisionView(
        **item(1).model_dump(exclude={"id", "kind"}),
        id=BATCH_ITEM,
        kind="verify-batch",
        tier="sandbox",
        region="US",
        clientRequestId="req-4",
    )
    api = FakeApi(lambda request: httpx.Response(200, json=view.model_dump(mode="json")))
    with make_client(api, clock) as client:
        answer = client.get_decision(BATCH_ITEM, client_request_id="req-4")

    (sent,) = api.calls()
    assert sent.method == "GET"
    assert (
        sent.url.raw_path == b"/v3/decisions/c0a9f1d2-5b8e-4a57-9d1e-3f6b2c7a8e90%233?clientRequestId=req-4"
    )
    assert (answer.id, answer.kind, answer.tier, answer.clientRequestId) == (
        BATCH_ITEM, "verify-batch", "sandbox", "req-4",
    )  # fmt: skip


def test_an_id_the_client_has_no_record_of_raises_not_found(clock: FakeClock) -> None:
    api = FakeApi(lambda request: as_the_api_answers(DecisionNotFound()))
    with make_client(api, clock) as client, pytest.raises(NotFoundError) as raised:
        client.get_decision("d-404")

    assert (raised.value.status, raised.value.code, raised.value.message) == (404, 8011, "Decision not found")


# --- The summary and the erasure ---


def test_the_summary_sends_its_days_and_reads_every_count(clock: FakeClock) -> None:
    summary = DecisionSummaryResponse(
        firstDay="2026-11-01",
        lastDay="2026-11-30",
        total=3,
        passed=1,
        failed=1,
        errors=1,
        byReasonCode={"9135": 1},
        byKind={"staged": 2, "verify": 1},
        byDay=[DayCounts(day="2026-11-02", total=3, passed=1, failed=1, errors=1)],
        conversion={
            "sms": Conversion(attempted=2, succeeded=1, rate=0.5),
            "instantLink": Conversion(attempted=0, succeeded=0),
            "mobileAuth": Conversion(attempted=0, succeeded=0),
        },
    )
    api = FakeApi(lambda request: httpx.Response(200, json=summary.model_dump(mode="json")))
    with make_client(api, clock) as client:
        answer = client.summarise_decisions(from_=date(2026, 11, 1), to="2026-11-30")
        client.summarise_decisions(to=datetime(2026, 11, 30, 23, 59, tzinfo=UTC))

    dated, by_datetime = api.calls()
    assert (dated.method, dated.url.path, query(dated)) == (
        "GET", "/v3/decisions/summary", {"from": "2026-11-01", "to": "2026-11-30"},
    )  # fmt: skip
    assert query(by_datetime) == {"to": "2026-11-30"}
    assert (answer.total, answer.passed, answer.failed, answer.errors) == (3, 1, 1, 1)
    assert answer.byReasonCode == {"9135": 1}
    assert answer.byDay is not None
    assert answer.byDay[0].day == "2026-11-02"
    assert answer.conversion is not None
    assert (answer.conversion["sms"].rate, answer.conversion["instantLink"].rate) == (0.5, None)


def test_erasing_a_number_sends_it_in_the_query_and_answers_how_many(clock: FakeClock) -> None:
    erased: dict[str, Any] = DecisionEraseResponse(erased=4).model_dump(mode="json")
    api = FakeApi(lambda request: httpx.Response(200, json=erased))
    with make_client(api, clock) as client:
        answer = client.erase_decisions("+12025550112", client_request_id="req-5")

    (sent,) = api.calls()
    assert (sent.method, sent.url.path, query(sent)) == (
        "DELETE", "/v3/decisions", {"phoneNumber": "+12025550112", "clientRequestId": "req-5"},
    )  # fmt: skip
    assert sent.content == b""
    assert answer.erased == 4
