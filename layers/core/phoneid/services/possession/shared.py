"""What the possession steps share: the check each step makes first, the limits a session runs
under, the Sandbox's passing code, and the hash a handed-out secret is stored by."""

from __future__ import annotations

import hashlib

from phoneid.domain import possession as rules
from phoneid.domain.clients import Caller, Flag
from phoneid.domain.offer import POSSESSION_STEPS
from phoneid.domain.possession import Method, PossessionClosed, PossessionLimit
from phoneid.domain.session import Session

SANDBOX_CODE = "1234"


class MethodUnavailable(PossessionLimit):
    default_message = "This possession method is not available for this flow"


def secret_hash(secret: str) -> str:
    """Links and OIDC states carry 128+ random bits, so SHA-256 stores them safely."""
    return hashlib.sha256(secret.encode()).hexdigest()


def session_limits(session: Session, caller: Caller) -> rules.Rules:
    return rules.Rules(
        allow_otp_retry=session.allow_otp_retry,
        number_change_enabled=caller.has(Flag.PHONE_NUMBER_CHANGE),
    )


def require_open(session: Session, method: Method, methods: list[Method]) -> None:
    if session.next_step not in POSSESSION_STEPS:
        raise PossessionClosed("This session no longer accepts possession steps")
    session.possession.require_pending()
    if method not in methods:
        raise MethodUnavailable(f"{method.value} is not available for this flow")
