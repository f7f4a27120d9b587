"""Idempotency keys at their edges (docs/mutation.md): the header's count and quoting, the lease's and
the lifetime's last instant and the one after, which statuses are kept, and a fingerprint that must
not change between versions (a retry across a deploy compares it with the stored one)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from phoneid.domain.errors import MalformedRequest
from phoneid.domain.idempotency import (
    KEY_LIFETIME,
    MAX_KEY_LENGTH,
    Claimed,
    IdempotentRequest,
    RecordStatus,
    Replay,
    fingerprint,
    parse_key,
    stored,
)
from tests.fakes import START

LEASE = timedelta(seconds=10)


def refused(values: list[str]) -> MalformedRequest:
    with pytest.raises(MalformedRequest) as raised:
        parse_key(values)
    assert raised.value.parameters == ["Idempotency-Key"]
    return raised.value


def test_no_value_at_all_is_refused_as_not_appearing_once() -> None:
    assert "must appear once" in str(refused([]))


def test_a_key_of_255_characters_is_read_and_256_refused() -> None:
    assert MAX_KEY_LENGTH == 255
    assert parse_key(["k" * 255]) == "k" * 255
    refused(["k" * 256])
    assert parse_key([f'"{"k" * 255}"']) == "k" * 255


@pytest.mark.parametrize(
    "sent",
    [
        'ab"',  # a closing quote without an opening one
        '"abc',  # an opening quote without a closing one
        '!abc"',  # a character before the closing quote that sorts before it
        '"',  # one quote
        '""',  # the empty quoted string
        "'abc'",  # single quotes are no sf-string
    ],
)
def test_only_a_key_in_a_pair_of_double_quotes_is_unquoted(sent: str) -> None:
    refused([sent])


def test_a_quoted_key_with_spaces_around_is_read() -> None:
    assert parse_key(['  "abc"  ']) == "abc"


def test_the_fingerprint_is_the_same_from_one_version_to_the_next() -> None:
    # A known answer (sha256 of "POST /v3/identity\n{\"a\":[1,2],\"b\":\"é\"}", the body in UTF-8, not
    # escaped): a stored record's fingerprint is compared with a retry's, perhaps across a deploy.
    body = {"b": "é", "a": [1, 2]}
    assert fingerprint("post", "/v3/identity", body) == (
        "c67f8d26e81baa81d35654e91791a5b82c26d8b9ee8b612784dd4a2f94a75b43"
    )


def test_a_claim_holds_its_lease_and_lives_24_hours() -> None:
    record = IdempotentRequest("alice", "key", "fp").claim("owner", START, LEASE)
    assert (record.status, record.lease_until, record.expires_at) == (
        RecordStatus.IN_PROGRESS,
        START + LEASE,
        START + KEY_LIFETIME,
    )
    assert timedelta(hours=24) == KEY_LIFETIME


def test_a_key_in_flight_is_held_until_its_lease_ends_and_free_from_then_on() -> None:
    record = IdempotentRequest("alice", "key", "fp").claim("owner", START, LEASE)
    end = START + LEASE
    assert not record.claimable(end - timedelta(microseconds=1))
    assert record.abandoned(end)
    assert record.claimable(end)
    assert record.abandoned(end + timedelta(seconds=1))
    assert record.claimable(end + timedelta(seconds=1))


def test_a_completed_key_is_kept_until_24_hours_and_free_from_then_on() -> None:
    record = dataclasses.replace(
        IdempotentRequest("alice", "key", "fp").claim("owner", START, LEASE), status=RecordStatus.COMPLETED
    )
    end = START + KEY_LIFETIME
    assert not record.abandoned(end)  # a completed record is never abandoned
    assert not record.claimable(end - timedelta(microseconds=1))
    assert record.expired(end)
    assert record.claimable(end)
    assert record.expired(end + timedelta(seconds=1))
    assert record.claimable(end + timedelta(seconds=1))


@pytest.mark.parametrize(
    ("status", "kept"), [(199, False), (200, True), (201, True), (299, True), (300, False)]
)
def test_only_a_2xx_answer_is_kept(status: int, kept: bool) -> None:
    assert stored(status) is kept


def test_a_replay_and_a_claim_cannot_be_changed_once_made() -> None:
    record = IdempotentRequest("alice", "key", "fp").claim("owner", START, LEASE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Replay({"statusCode": 200}).response = {}  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Claimed(record).record = record  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.status = RecordStatus.COMPLETED  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        IdempotentRequest("alice", "key", "fp").key = "another"  # type: ignore[misc]
