"""The possession limits of SPEC at their edges, both sides of each (docs/mutation.md).

Three OTP entries with allowOTPRetry (one without), three SMS sends including the first, three phone
numbers with number change; a code lives 2 minutes from its SMS, a link 3. Time is injected.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from phoneid.domain import possession as engine
from phoneid.domain.errors import StepOutOfOrder
from phoneid.domain.possession import (
    CodeExpired,
    Method,
    PossessionLimit,
    PossessionState,
    Rules,
    Status,
)
from tests.fakes import START

ONE_ENTRY = Rules(allow_otp_retry=False, number_change_enabled=False)
RETRY = Rules(allow_otp_retry=True, number_change_enabled=True)


def coded(state: PossessionState | None = None) -> PossessionState:
    return engine.otp_sent(state or PossessionState(), "mac", START)


def test_the_limits_are_three_entries_three_sends_three_numbers() -> None:
    assert (engine.MAX_OTP_ENTRIES_WITH_RETRY, engine.MAX_SENDS, engine.MAX_NUMBERS) == (3, 3, 3)
    assert (RETRY.max_entries, ONE_ENTRY.max_entries) == (3, 1)
    assert (timedelta(minutes=2), timedelta(minutes=3)) == (engine.OTP_LIFETIME, engine.LINK_LIFETIME)


# --- OTP entries: the third and the fourth ------------------------------------------------------------


def test_with_retry_a_right_third_entry_passes() -> None:
    # Given two wrong entries
    state = coded()
    for _ in range(2):
        state = engine.otp_entered(state, RETRY, correct=False, now=START)
    assert (state.status, state.entries, engine.entries_left(state, RETRY)) == (Status.PENDING, 2, 1)

    # When the third is right
    state = engine.otp_entered(state, RETRY, correct=True, now=START)

    # Then possession passes on it
    assert (state.status, state.method, state.entries) == (Status.PASSED, Method.OTP, 3)


def test_with_retry_a_wrong_third_entry_fails_with_none_left() -> None:
    state = coded()
    for _ in range(3):
        state = engine.otp_entered(state, RETRY, correct=False, now=START)
    assert (state.status, state.last_error, state.entries) == (Status.FAILED, "otp-invalid", 3)
    assert engine.entries_left(state, RETRY) == 0


def test_a_fourth_entry_is_refused_even_if_the_state_was_left_pending() -> None:
    # Given a pending state that somehow counts three entries (the limit is checked before the code)
    state = replace(coded(), entries=3)

    # When a right code is entered
    # Then it is refused for the limit
    with pytest.raises(PossessionLimit, match="At most 3 code entries"):
        engine.otp_entered(state, RETRY, correct=True, now=START)


def test_without_retry_a_second_entry_is_refused() -> None:
    with pytest.raises(PossessionLimit, match="At most 1 code entries"):
        engine.otp_entered(replace(coded(), entries=1), ONE_ENTRY, correct=True, now=START)


def test_a_wrong_entry_that_is_not_the_last_keeps_the_session_pending() -> None:
    state = engine.otp_entered(coded(), RETRY, correct=False, now=START)
    assert (state.status, state.last_error, state.entries) == (Status.PENDING, "otp-invalid", 1)
    assert state.code_digest == "mac"  # the same code may be entered again


def test_entries_left_never_goes_below_zero() -> None:
    assert engine.entries_left(replace(PossessionState(), entries=5), RETRY) == 0
    assert engine.entries_left(PossessionState(), RETRY) == 3


# --- SMS sends and numbers: the third and the fourth --------------------------------------------------


def test_the_third_send_is_counted_and_the_fourth_refused() -> None:
    state = replace(PossessionState(), sends=2, numbers=1)
    third = engine.before_send(state, RETRY, new_number=False)
    assert (third.sends, third.numbers, engine.sends_left(third)) == (3, 1, 0)
    with pytest.raises(PossessionLimit, match="At most 3 messages"):
        engine.before_send(third, RETRY, new_number=False)


def test_sends_left_counts_down_and_never_below_zero() -> None:
    assert engine.sends_left(PossessionState()) == 3
    assert engine.sends_left(replace(PossessionState(), sends=1)) == 2
    assert engine.sends_left(replace(PossessionState(), sends=4)) == 0


def test_the_third_number_is_taken_and_the_fourth_refused() -> None:
    state = replace(PossessionState(), sends=1, numbers=2)
    third = engine.before_send(state, RETRY, new_number=True)
    assert (third.sends, third.numbers) == (2, 3)
    with pytest.raises(PossessionLimit, match="At most 3 phone numbers"):
        engine.before_send(replace(third, sends=0), RETRY, new_number=True)


def test_without_number_change_the_first_number_is_taken_and_a_second_refused() -> None:
    first = engine.before_send(PossessionState(), ONE_ENTRY, new_number=True)
    assert (first.sends, first.numbers) == (1, 1)
    assert engine.before_send(first, ONE_ENTRY, new_number=False).numbers == 1  # a resend is no new number
    with pytest.raises(PossessionLimit, match="not enabled"):
        engine.before_send(first, ONE_ENTRY, new_number=True)


def test_a_send_clears_the_last_error() -> None:
    state = replace(PossessionState(), sends=1, numbers=1, last_error="otp-invalid")
    assert engine.before_send(state, RETRY, new_number=False).last_error is None


# --- a code's 2 minutes and a link's 3: the last second and the one after -----------------------------


def test_a_code_entered_at_exactly_two_minutes_is_read() -> None:
    state = engine.otp_entered(coded(), ONE_ENTRY, correct=True, now=START + timedelta(minutes=2))
    assert state.status == Status.PASSED


def test_a_code_entered_one_second_after_two_minutes_has_expired() -> None:
    with pytest.raises(CodeExpired):
        engine.otp_entered(coded(), ONE_ENTRY, correct=True, now=START + timedelta(minutes=2, seconds=1))


def test_a_link_selected_at_exactly_three_minutes_passes_and_one_second_later_has_expired() -> None:
    state = engine.link_sent(PossessionState(), "hash", START)
    passed = engine.link_selected(state, START + timedelta(minutes=3))
    assert (passed.status, passed.method, passed.link_digest) == (Status.PASSED, Method.INSTANT_LINK, None)
    with pytest.raises(CodeExpired, match="link has expired"):
        engine.link_selected(state, START + timedelta(minutes=3, seconds=1))


def test_a_failed_possession_is_decided_and_a_pending_one_is_not() -> None:
    assert not PossessionState().decided
    assert engine.failed(PossessionState(), Method.OTP).decided
    assert engine.passed(PossessionState(), Method.OTP).decided


def test_an_entry_with_no_code_on_record_is_out_of_order_whatever_else_the_state_holds() -> None:
    # Given a state that records when a code was sent but holds no code (it was used, or never made)
    state = replace(PossessionState(), code_sent_at=START)

    # Then an entry, even one said to be right, is out of order
    with pytest.raises(StepOutOfOrder, match="No code has been sent"):
        engine.otp_entered(state, RETRY, correct=True, now=START)
