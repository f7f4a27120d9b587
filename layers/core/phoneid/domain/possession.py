"""The possession engine: Mobile Auth, SMS OTP and Instant Link, their limits and their clock.

Pure rules over a session's ``PossessionState``. Each operation returns the new state (which the
caller writes with one conditional write) or raises the error the customer's client should see.
The staged flow and the unified flow share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from phoneid.domain.errors import PhoneIdError, StepOutOfOrder

OTP_LIFETIME = timedelta(minutes=2)
LINK_LIFETIME = timedelta(minutes=3)
MAX_SENDS = 3  # SMS sends per session, the first included
MAX_OTP_ENTRIES_WITH_RETRY = 3
MAX_NUMBERS = 3  # phone numbers the customer may enter (the first and two changes)
DEFAULT_OTP_LENGTH = 6
DEFAULT_OTP_MESSAGE = "{code} is your verification code. It expires in 2 minutes."
_HASHES = re.compile(r"#+")


class Method(StrEnum):
    MOBILE_AUTH = "mobile-auth"
    OTP = "otp"
    INSTANT_LINK = "instant-link"
    # Possession proven before the session existed (Sandbox token-only user, a valid device key).
    PRESET = "preset"


class Status(StrEnum):
    PENDING = "pending"
    PASSED = "passed"
    FAILED = "failed"


class MobileAuth(StrEnum):
    NOT_TRIED = "not-tried"
    REDIRECTED = "redirected"
    PASSED = "passed"
    FAILED = "failed"


class PossessionLimit(PhoneIdError):
    """A limit of the possession flow was reached; nothing was sent or recorded."""

    code = 8003
    status = 403
    default_message = "Possession limit reached"


class PossessionClosed(StepOutOfOrder):
    """The session no longer accepts possession steps (decided, or past validation)."""

    status = 403
    default_message = "Possession is already decided for this session"


class CodeExpired(PhoneIdError):
    code = 8003
    status = 400
    default_message = "The code has expired; request a new one"


class LinkUnusable(PhoneIdError):
    """An Instant Link that is unknown, used, replaced by a newer one, or expired."""

    code = 8008
    status = 410
    default_message = "This link has expired or was already used"


def sms_template(message: str | None) -> tuple[str, int]:
    """The SMS text with a ``{code}`` slot and the code length its ``####`` placeholder asks for."""
    if message is None:
        return DEFAULT_OTP_MESSAGE, DEFAULT_OTP_LENGTH
    runs = _HASHES.findall(message)
    if len(runs) != 1 or not 4 <= len(runs[0]) <= 6 or "{" in message or "}" in message:
        raise ValueError("must contain exactly one placeholder of 4 to 6 '#' (and no other '#' or braces)")
    return _HASHES.sub("{code}", message, count=1), len(runs[0])


@dataclass(frozen=True)
class PossessionState:
    status: Status = Status.PENDING
    method: Method | None = None  # the method that decided the outcome
    mobile_auth: MobileAuth = MobileAuth.NOT_TRIED
    mobile_auth_state: str | None = None  # hash of the OIDC state sent to the operator
    sends: int = 0
    entries: int = 0
    numbers: int = 0  # numbers entered by the customer
    code_digest: str | None = None  # keyed MAC of the current OTP, never the code
    code_sent_at: datetime | None = None
    link_digest: str | None = None  # hash of the current Instant Link token
    link_sent_at: datetime | None = None
    last_error: str | None = None  # for the client: otp-invalid, otp-expired, link-expired, ...

    @property
    def decided(self) -> bool:
        return self.status != Status.PENDING

    def require_pending(self) -> None:
        if self.decided:
            raise PossessionClosed(f"Possession already {self.status.value} for this session")


@dataclass(frozen=True)
class Rules:
    """The limits that apply to one session."""

    allow_otp_retry: bool
    number_change_enabled: bool

    @property
    def max_entries(self) -> int:
        return MAX_OTP_ENTRIES_WITH_RETRY if self.allow_otp_retry else 1


def passed(state: PossessionState, method: Method) -> PossessionState:
    return replace(state, status=Status.PASSED, method=method, last_error=None)


def failed(state: PossessionState, method: Method, error: str | None = None) -> PossessionState:
    return replace(state, status=Status.FAILED, method=method, last_error=error)


def before_send(state: PossessionState, rules: Rules, *, new_number: bool) -> PossessionState:
    """Count one SMS (and a number entry when the customer typed a number); refuse past the limits."""
    state.require_pending()
    if new_number and state.numbers >= 1 and not rules.number_change_enabled:
        raise PossessionLimit("Phone number change is not enabled for these credentials")
    if new_number and state.numbers >= MAX_NUMBERS:
        raise PossessionLimit(f"At most {MAX_NUMBERS} phone numbers may be entered")
    if state.sends >= MAX_SENDS:
        raise PossessionLimit(f"At most {MAX_SENDS} messages may be sent")
    # Entries are counted per session: neither a resend nor a new number gives more.
    return replace(
        state, sends=state.sends + 1, numbers=state.numbers + (1 if new_number else 0), last_error=None
    )


def otp_sent(state: PossessionState, digest: str, now: datetime) -> PossessionState:
    return replace(state, code_digest=digest, code_sent_at=now, link_digest=None, link_sent_at=None)


def link_sent(state: PossessionState, digest: str, now: datetime) -> PossessionState:
    return replace(state, link_digest=digest, link_sent_at=now, code_digest=None, code_sent_at=None)


def otp_entered(state: PossessionState, rules: Rules, correct: bool, now: datetime) -> PossessionState:
    """One OTP entry: one per session, or three with allowOTPRetry. The last wrong one fails possession."""
    state.require_pending()
    if state.code_digest is None or state.code_sent_at is None:
        raise StepOutOfOrder("No code has been sent for this session")
    if state.entries >= rules.max_entries:
        raise PossessionLimit(f"At most {rules.max_entries} code entries are allowed")
    if now - state.code_sent_at > OTP_LIFETIME:
        raise CodeExpired()
    entries = state.entries + 1
    if correct:
        return passed(replace(state, entries=entries, code_digest=None), Method.OTP)
    if entries >= rules.max_entries:
        return failed(replace(state, entries=entries), Method.OTP, "otp-invalid")
    return replace(state, entries=entries, last_error="otp-invalid")


def link_selected(state: PossessionState, now: datetime) -> PossessionState:
    state.require_pending()
    if state.link_sent_at is None:
        raise StepOutOfOrder("No link has been sent for this session")
    if now - state.link_sent_at > LINK_LIFETIME:
        raise CodeExpired("The link has expired; request a new one")
    return passed(replace(state, link_digest=None), Method.INSTANT_LINK)


def entries_left(state: PossessionState, rules: Rules) -> int:
    return max(rules.max_entries - state.entries, 0)


def sends_left(state: PossessionState) -> int:
    return max(MAX_SENDS - state.sends, 0)
