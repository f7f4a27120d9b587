"""The possession engine's rules, as pure functions over a session's possession state."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from phoneid.domain import possession as engine
from phoneid.domain.errors import StepOutOfOrder
from phoneid.domain.possession import (
    CodeExpired,
    Method,
    PossessionClosed,
    PossessionLimit,
    PossessionState,
    Rules,
    Status,
    sms_template,
)
from tests.fakes import START

ONE_ENTRY = Rules(allow_otp_retry=False, number_change_enabled=False)
RETRY = Rules(allow_otp_retry=True, number_change_enabled=True)


def sent(rules: Rules = ONE_ENTRY) -> PossessionState:
    state = engine.before_send(PossessionState(), rules, new_number=True)
    return engine.otp_sent(state, "mac", START)


def test_a_right_code_within_two_minutes_passes() -> None:
    state = engine.otp_entered(sent(), ONE_ENTRY, correct=True, now=START + timedelta(seconds=119))

    assert state.status == Status.PASSED
    assert state.method == Method.OTP
    assert state.code_digest is None  # a code works once


def test_a_code_after_two_minutes_is_expired_and_not_an_entry() -> None:
    with pytest.raises(CodeExpired):
        engine.otp_entered(sent(), ONE_ENTRY, correct=True, now=START + timedelta(seconds=121))


def test_one_wrong_entry_fails_without_retry() -> None:
    state = engine.otp_entered(sent(), ONE_ENTRY, correct=False, now=START)

    assert state.status == Status.FAILED
    assert state.last_error == "otp-invalid"


def test_with_retry_the_third_wrong_entry_fails_and_a_fourth_is_refused() -> None:
    state = sent(RETRY)
    for expected in (Status.PENDING, Status.PENDING, Status.FAILED):
        state = engine.otp_entered(state, RETRY, correct=False, now=START)
        assert state.status == expected

    with pytest.raises(PossessionClosed):
        engine.otp_entered(state, RETRY, correct=True, now=START)


def test_entries_are_not_reset_by_a_resend() -> None:
    state = engine.otp_entered(sent(RETRY), RETRY, correct=False, now=START)

    resent = engine.otp_sent(engine.before_send(state, RETRY, new_number=False), "mac2", START)

    assert engine.entries_left(resent, RETRY) == 2


def test_three_sends_then_refused() -> None:
    state = PossessionState()
    for number in range(3):
        state = engine.before_send(state, RETRY, new_number=number == 0)

    with pytest.raises(PossessionLimit, match="At most 3 messages"):
        engine.before_send(state, RETRY, new_number=False)
    assert engine.sends_left(state) == 0


def test_a_number_change_needs_the_flag_and_three_numbers_is_the_most() -> None:
    first = engine.before_send(PossessionState(), ONE_ENTRY, new_number=True)
    with pytest.raises(PossessionLimit, match="not enabled"):
        engine.before_send(first, ONE_ENTRY, new_number=True)

    state = replace(PossessionState(), numbers=3)
    with pytest.raises(PossessionLimit, match="3 phone numbers"):
        engine.before_send(state, RETRY, new_number=True)


def test_entering_before_any_code_is_out_of_order() -> None:
    with pytest.raises(StepOutOfOrder):
        engine.otp_entered(PossessionState(), ONE_ENTRY, correct=True, now=START)


def test_a_link_works_for_three_minutes() -> None:
    state = engine.link_sent(engine.before_send(PossessionState(), ONE_ENTRY, new_number=True), "hash", START)

    assert engine.link_selected(state, START + timedelta(seconds=179)).status == Status.PASSED
    with pytest.raises(CodeExpired):
        engine.link_selected(state, START + timedelta(seconds=181))


def test_a_decided_possession_takes_no_more_steps() -> None:
    decided = engine.passed(PossessionState(), Method.MOBILE_AUTH)

    with pytest.raises(PossessionClosed):
        engine.before_send(decided, RETRY, new_number=False)


def test_a_new_code_replaces_the_link_and_the_other_way_round() -> None:
    linked = engine.link_sent(PossessionState(), "link", START)
    coded = engine.otp_sent(linked, "code", START)

    assert coded.link_digest is None
    assert engine.link_sent(coded, "link2", START).code_digest is None


@pytest.mark.parametrize(
    ("message", "template", "length"),
    [
        (None, engine.DEFAULT_OTP_MESSAGE, 6),
        ("Your code: ####", "Your code: {code}", 4),
        ("###### is your Acme code", "{code} is your Acme code", 6),
    ],
)
def test_sms_message_placeholder_sets_the_code_length(
    message: str | None, template: str, length: int
) -> None:
    assert sms_template(message) == (template, length)


@pytest.mark.parametrize(
    "message", ["no placeholder", "### too short", "####### too long", "#### and ####", "{x} ####"]
)
def test_sms_message_needs_exactly_one_placeholder(message: str) -> None:
    with pytest.raises(ValueError, match="placeholder"):
        sms_template(message)
