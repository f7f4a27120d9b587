"""Which possession methods a session offers, in the order a client SDK tries them.

Decided from the session, the Sandbox's script for its test user, and whether Mobile Auth can run
at all (an operator configured); shared by the client API and by ``/v3/start``, whose authToken
names the methods so an SDK can begin without asking for the session first.
"""

from __future__ import annotations

from dataclasses import dataclass

from phoneid.domain.flow import Step
from phoneid.domain.phone import Region
from phoneid.domain.possession import Method, MobileAuth
from phoneid.domain.sandbox import Catalogue, TestUser
from phoneid.domain.session import Session

# The steps during which a session accepts possession work.
POSSESSION_STEPS = frozenset({Step.VALIDATE, Step.UNIFY_STATUS, Step.UNIFY_BIND})


@dataclass(frozen=True)
class MethodOffer:
    catalogue: Catalogue | None
    # An operator is configured (production), or the Sandbox scripts Mobile Auth.
    mobile_auth_runs: bool
    region: Region

    def user(self, session: Session) -> TestUser | None:
        return self.catalogue.find(session.phone_number) if self.catalogue else None

    def mobile_auth(self, session: Session) -> bool:
        if session.flow_type != "mobile":
            return False
        user = self.user(session)
        if user is not None:
            return user.signals.get("mobileAuth") in ("pass", "fail")
        return self.mobile_auth_runs and (session.phone_number is not None or self.region == "US")

    def otp(self, session: Session) -> bool:
        if session.flow_type != "mobile":
            return False
        user = self.user(session)
        # Sandbox users scripted with "no fallback" fail when Mobile Auth fails.
        return user is None or user.signals.get("otpFallback", True) is not False

    def methods(self, session: Session) -> list[Method]:
        state = session.possession
        if state.decided or session.next_step not in POSSESSION_STEPS:
            return []
        if session.flow_type == "desktop":
            return [Method.INSTANT_LINK]
        methods = []
        if self.mobile_auth(session) and state.mobile_auth in (MobileAuth.NOT_TRIED, MobileAuth.REDIRECTED):
            methods.append(Method.MOBILE_AUTH)
        if self.otp(session):
            methods.append(Method.OTP)
        return methods
