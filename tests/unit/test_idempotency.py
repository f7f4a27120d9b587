"""Idempotency keys in the domain and the service, with in-memory fakes and a fake clock: the key's
rule, the fingerprint, scoping by client, the lease of a request in flight and the 24-hour expiry."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from phoneid.domain.errors import IdempotencyKeyInUse, IdempotencyKeyReused, MalformedRequest
from phoneid.domain.idempotency import Claimed, IdempotentRequest, Replay, fingerprint, parse_key, record_id
from phoneid.services.idempotency import IdempotentRequests
from tests.fakes import ContextCipher, FakeClock, InMemoryIdempotencyStore

KEY = "8e03978e-40d5-43e8-bc93-6894a57f9324"
LEASE = timedelta(seconds=10)
OK = {"statusCode": 200, "multiValueHeaders": {"Content-Type": ["application/json"]}, "body": '{"a":1}'}


def request(client_id: str = "alice", key: str = KEY, body: Any = None) -> IdempotentRequest:
    return IdempotentRequest(client_id, key, fingerprint("POST", "/v3/identity", body or {"a": 1}))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store() -> InMemoryIdempotencyStore:
    return InMemoryIdempotencyStore()


@pytest.fixture
def requests(store: InMemoryIdempotencyStore, clock: FakeClock) -> IdempotentRequests:
    return IdempotentRequests(store, ContextCipher(), clock)


def answered(requests: IdempotentRequests, keyed: IdempotentRequest, response: dict[str, Any]) -> None:
    claimed = requests.begin(keyed, LEASE)
    assert isinstance(claimed, Claimed)
    requests.finish(claimed, response)


# --- the key and the fingerprint ---------------------------------------------------------------------


@pytest.mark.parametrize("sent", [KEY, f'"{KEY}"', f"  {KEY} ", "a", "A-z_0.9:+/=", "k" * 255])
def test_a_key_is_read_bare_or_as_the_drafts_quoted_string(sent: str) -> None:
    assert parse_key([sent]) == sent.strip().strip('"')


@pytest.mark.parametrize("sent", ["", '""', "k" * 256, "two words", "a,b", "ключ", '"open', "a\tb", "a;b"])
def test_a_key_outside_the_rule_is_an_8001_naming_the_header(sent: str) -> None:
    with pytest.raises(MalformedRequest) as refused:
        parse_key([sent])
    assert refused.value.parameters == ["Idempotency-Key"]
    assert sent not in refused.value.message or not sent


def test_the_header_twice_is_an_8001() -> None:
    with pytest.raises(MalformedRequest, match="Idempotency-Key: must appear once"):
        parse_key([KEY, KEY])


def test_the_fingerprint_ignores_key_order_and_spacing_but_not_values_route_or_method() -> None:
    base = fingerprint("POST", "/v3/identity", json.loads('{"a": 1, "b": [1, 2]}'))
    assert fingerprint("post", "/v3/identity", json.loads('{ "b":[1,2],"a":1 }')) == base
    assert fingerprint("POST", "/v3/identity", {"a": 2, "b": [1, 2]}) != base
    assert fingerprint("POST", "/v3/identity", {"a": 1, "b": [2, 1]}) != base
    assert fingerprint("POST", "/v3/verify", {"a": 1, "b": [1, 2]}) != base
    assert fingerprint("DELETE", "/v3/identity", {"a": 1, "b": [1, 2]}) != base


def test_a_record_id_is_scoped_by_client_and_holds_no_key_in_clear() -> None:
    assert record_id("alice", KEY) != record_id("bob", KEY)
    assert record_id("alice", KEY).startswith("alice#")
    assert KEY not in record_id("alice", KEY)


# --- the service --------------------------------------------------------------------------------------


def test_the_first_request_claims_the_key_and_a_retry_gets_its_answer(requests: IdempotentRequests) -> None:
    answered(requests, request(), OK)

    replay = requests.begin(request(), LEASE)

    assert replay == Replay(OK)


def test_the_answer_is_kept_sealed_bound_to_the_client_and_key(
    requests: IdempotentRequests, store: InMemoryIdempotencyStore
) -> None:
    answered(requests, request(), OK)

    (record,) = store.items.values()
    assert record.response is not None
    assert b'{"a":1}' not in record.response
    assert b"'use', 'idempotency'" in record.response  # the context it was sealed under


def test_another_request_under_the_key_is_422(requests: IdempotentRequests) -> None:
    answered(requests, request(), OK)

    with pytest.raises(IdempotencyKeyReused):
        requests.begin(request(body={"a": 2}), LEASE)


def test_a_request_in_flight_holds_the_key_until_its_lease_ends(
    requests: IdempotentRequests, clock: FakeClock
) -> None:
    # Given a first attempt that claimed the key and is still running
    assert isinstance(requests.begin(request(), LEASE), Claimed)

    # Then a retry within the lease is 409, even with another body (the holder decides nothing yet)
    clock.advance(seconds=9)
    with pytest.raises(IdempotencyKeyInUse):
        requests.begin(request(), LEASE)

    # And once the lease is over (the attempt's function timed out) the retry claims the key
    clock.advance(seconds=1)
    assert isinstance(requests.begin(request(), LEASE), Claimed)


def test_a_late_answer_of_an_attempt_whose_key_was_taken_over_is_not_kept(
    requests: IdempotentRequests, store: InMemoryIdempotencyStore, clock: FakeClock
) -> None:
    late = requests.begin(request(), LEASE)
    clock.advance(seconds=10)
    current = requests.begin(request(), LEASE)
    assert isinstance(late, Claimed)
    assert isinstance(current, Claimed)

    requests.finish(late, {**OK, "body": "late"})
    requests.finish(current, OK)

    assert requests.begin(request(), LEASE) == Replay(OK)


def test_keys_are_per_client(requests: IdempotentRequests) -> None:
    answered(requests, request("alice"), OK)

    assert isinstance(requests.begin(request("bob"), LEASE), Claimed)
    assert isinstance(requests.begin(request("bob", key="other", body={"b": 1}), LEASE), Claimed)


@pytest.mark.parametrize("status", [400, 403, 404, 429, 500, 503])
def test_a_refusal_or_failure_frees_the_key(requests: IdempotentRequests, status: int) -> None:
    answered(requests, request(), {**OK, "statusCode": status})

    # The corrected request runs under the same key
    assert isinstance(requests.begin(request(body={"corrected": True}), LEASE), Claimed)


def test_an_abandoned_attempt_frees_the_key(requests: IdempotentRequests) -> None:
    claimed = requests.begin(request(), LEASE)
    assert isinstance(claimed, Claimed)

    requests.abandon(claimed)

    assert isinstance(requests.begin(request(), LEASE), Claimed)


def test_a_key_expires_24_hours_after_the_first_request(
    requests: IdempotentRequests, clock: FakeClock
) -> None:
    answered(requests, request(), OK)

    clock.advance(hours=23, minutes=59, seconds=59)
    assert requests.begin(request(), LEASE) == Replay(OK)

    clock.advance(seconds=1)
    assert isinstance(requests.begin(request(body={"new": 1}), LEASE), Claimed)


class _KeyChangingHands:
    """DynamoDB as it answers while other attempts claim and release the key: every claim refused,
    every read after it finding nothing."""

    def __init__(self) -> None:
        self.claims = 0

    def put_item(self, **_: Any) -> None:
        from botocore.exceptions import ClientError

        self.claims += 1
        raise ClientError(
            {"Error": {"Code": "ConditionalCheckFailedException", "Message": "held"}}, "PutItem"
        )

    def get_item(self, **_: Any) -> dict[str, Any]:
        return {}


def test_a_key_that_changes_hands_during_a_claim_is_answered_as_in_use() -> None:
    from phoneid.adapters.dynamodb.idempotency import DynamoIdempotencyStore

    dynamodb = _KeyChangingHands()
    clock = FakeClock()
    record = request().claim("me", clock.now(), timedelta(seconds=10))

    with pytest.raises(IdempotencyKeyInUse):
        DynamoIdempotencyStore(dynamodb, "table").claim(record, clock.now())
    assert dynamodb.claims == 2
