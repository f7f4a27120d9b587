"""Token keys at the rotation's and the signers' edges (docs/mutation.md): after days without a
rotation, the private halves of the three windows back are all forgotten; a signer whose clock steps
back reads the table again rather than trust what it opened "in the future"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
