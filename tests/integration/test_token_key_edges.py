"""Token keys at the rotation's and the signers' edges (docs/mutation.md): after days without a
rotation, the private halves of the three windows back are all forgotten, and no older window is
asked about; a private half is forgotten from the instant no signer's clock can be in its window; a
signer reads the table once per five minutes however many tokens it signs, and again when its clock
steps back rather than trust what it opened "in the future"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.fakes import FakeClock
from tests.harness import Api
from tests.integration.test_token_keys import MONDAY, MONDAY_NOON, TUESDAY, Keys, kid_of, token


@pytest.fixture
def keys(api: Api) -> Keys:
    return Keys(api)


def test_a_rotation_after_days_without_one_forgets_the_three_windows_back(keys: Keys) -> None:
    # Given Monday's and Tuesday's keys, and no rotation after Monday noon
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()

    # When the rotation runs again only on Thursday (Wednesday's key was never made)
    clock.current = datetime(2026, 12, 3, 0, 1, tzinfo=UTC)
    report = keys.rotation(clock).run()

    # Then it forgets Tuesday's (two back) and Monday's (three back) private halves
    assert sorted(report.forgotten) == sorted([TUESDAY.name, MONDAY.name])
    assert "sealedPrivateKey" not in keys.item(MONDAY)
    assert "sealedPrivateKey" not in keys.item(TUESDAY)


def test_a_signer_whose_clock_steps_back_reads_the_table_again(keys: Keys) -> None:
    # Given a signer that opened Monday's key, and the key then replaced
    clock = FakeClock(MONDAY_NOON)
    rotation = keys.rotation(clock)
    rotation.run()
    signer = keys.signer(clock)
    before = token(signer, clock.current)
    replaced = rotation.replace()

    # When its clock steps back a minute (within the same window)
    clock.current = MONDAY_NOON - timedelta(minutes=1)

    # Then it signs with the new key at once, not with the one it checked "a minute from now"
    after = token(signer, clock.current)
    assert kid_of(after) == replaced[0].kid != kid_of(before)


def test_a_verifier_holds_a_key_until_its_last_token_expires_and_not_at_that_instant(keys: Keys) -> None:
    # Given Monday's key; its last token expires at Tuesday 00:00 + 30 s + one hour
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()
    kid = kid_of(token(keys.signer(clock), clock.current))
    last = datetime(2026, 12, 1, 1, 0, 30, tzinfo=UTC)
    assert last == MONDAY.last_token_expires

    # Then a verifier gives the key a microsecond before, and none at that instant
    clock.current = last - timedelta(microseconds=1)
    assert keys.verifier(clock).verification_key(kid) is not None
    clock.current = last
    assert keys.verifier(clock).verification_key(kid) is None


def test_a_verifier_whose_clock_steps_back_reads_the_keys_again(keys: Keys) -> None:
    # Given a verifier that read Monday's key, and the key then replaced
    clock = FakeClock(MONDAY_NOON)
    rotation = keys.rotation(clock)
    rotation.run()
    verifier = keys.verifier(clock)
    old = kid_of(token(keys.signer(clock), clock.current))
    assert verifier.verification_key(old) is not None
    replaced = rotation.replace()

    # When its clock steps back a minute, it reads the keys again: the old one is gone
    clock.current = MONDAY_NOON - timedelta(minutes=1)
    assert verifier.verification_key(old) is None
    assert verifier.verification_key(replaced[0].kid) is not None


def test_a_private_half_is_forgotten_from_the_instant_its_sealing_ends_and_not_before(keys: Keys) -> None:
    # Given Monday's key: a signer's clock may be in Monday until Tuesday 00:00 + 30 s
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()
    assert MONDAY.sealing_ends == datetime(2026, 12, 1, 0, 0, 30, tzinfo=UTC)

    # When the rotation runs a microsecond before that, it keeps Monday's private half
    clock.current = MONDAY.sealing_ends - timedelta(microseconds=1)
    assert keys.rotation(clock).run().forgotten == []
    assert "sealedPrivateKey" in keys.item(MONDAY)

    # Then run at that instant, it forgets it
    clock.current = MONDAY.sealing_ends
    assert keys.rotation(clock).run().forgotten == [MONDAY.name]
    assert "sealedPrivateKey" not in keys.item(MONDAY)


def test_a_rotation_asks_to_forget_the_three_windows_back_and_no_older_one(keys: Keys) -> None:
    # Given Monday's and Tuesday's keys, and the table's removals recorded
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()
    asked: list[str] = []

    def removal(params: dict[str, Any], **_: Any) -> None:
        if str(params.get("UpdateExpression", "")).startswith("REMOVE"):
            asked.append(params["Key"]["window"]["S"])

    keys.api.container.dynamodb.meta.events.register("provide-client-params.dynamodb.UpdateItem", removal)

    # When the rotation runs on Thursday
    clock.current = datetime(2026, 12, 3, 0, 1, tzinfo=UTC)
    keys.rotation(clock).run()

    # Then it asks about Wednesday, Tuesday and Monday, one conditional removal each, and not Sunday:
    # older windows' items have expired (their ttl), and a run costs three writes at most
    assert asked == [MONDAY.shifted(2).name, TUESDAY.name, MONDAY.name]


def test_a_signer_reads_the_table_once_for_every_token_it_signs_within_five_minutes(keys: Keys) -> None:
    # Given a signer of Monday, and the table's reads counted
    clock = FakeClock(MONDAY_NOON)
    keys.rotation(clock).run()
    signer = keys.signer(clock)
    reads: list[str] = []
    keys.api.container.dynamodb.meta.events.register(
        "provide-client-params.dynamodb.GetItem", lambda **_: reads.append("read")
    )

    # When it signs 20 tokens at one instant and 20 more 4 min 59 s later
    signed = [token(signer, clock.current) for _ in range(20)]
    clock.advance(minutes=4, seconds=59)
    signed += [token(signer, clock.current) for _ in range(20)]

    # Then it read its key once, and reads it again at five minutes
    assert len({kid_of(jwt) for jwt in signed}) == 1
    assert len(reads) == 1
    clock.advance(seconds=1)
    token(signer, clock.current)
    assert len(reads) == 2
