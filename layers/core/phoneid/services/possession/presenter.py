"""What the client SDK sees of a session: its methods, the state of each, and the device key step."""

from __future__ import annotations

from datetime import datetime

from phoneid.api.client_models import ClientSession, DeviceKeyView, InstantLinkView, MobileAuthView, OtpView
from phoneid.domain import possession as rules
from phoneid.domain.clients import Caller
from phoneid.domain.offer import POSSESSION_STEPS, MethodOffer
from phoneid.domain.possession import LINK_LIFETIME, OTP_LIFETIME, MobileAuth
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import Session
from phoneid.services.possession.shared import SANDBOX_CODE, session_limits


class Presenter:
    def __init__(self, *, catalogue: Catalogue | None, websocket_url: str | None, offer: MethodOffer) -> None:
        self._catalogue = catalogue
        self._websocket_url = websocket_url
        self._offer = offer

    def present(self, session: Session, caller: Caller, redirect: str | None = None) -> ClientSession:
        """What the client SDK sees of a session."""
        state = session.possession
        limits = session_limits(session, caller)
        otp = link = None
        if session.flow_type == "mobile":
            otp = OtpView(
                length=session.otp_length if self._catalogue is None else len(SANDBOX_CODE),
                sent=state.code_sent_at is not None,
                sendsLeft=rules.sends_left(state),
                entriesLeft=rules.entries_left(state, limits),
                expiresAt=_iso(state.code_sent_at + OTP_LIFETIME) if state.code_sent_at else None,
            )
        else:
            link = InstantLinkView(
                sent=state.link_sent_at is not None,
                sendsLeft=rules.sends_left(state),
                expiresAt=_iso(state.link_sent_at + LINK_LIFETIME) if state.link_sent_at else None,
                websocketUrl=self._websocket_url,
            )
        mobile_auth = None
        if self._offer.mobile_auth(session):
            status = {
                MobileAuth.NOT_TRIED: "not-tried",
                MobileAuth.REDIRECTED: "redirect" if redirect else "not-tried",
                MobileAuth.PASSED: "passed",
                MobileAuth.FAILED: "failed",
            }[state.mobile_auth]
            mobile_auth = MobileAuthView(status=status, url=redirect)
        return ClientSession(
            deviceKey=self._device_key_view(session),
            correlationId=session.correlation_id,
            flowType=session.flow_type,
            status=state.status.value,
            phoneNumberNeeded=session.phone_number is None,
            numberChangeAllowed=limits.number_change_enabled,
            methods=[m.value for m in self._offer.methods(session)],
            mobileAuth=mobile_auth,
            otp=otp,
            instantLink=link,
            lastError=state.last_error,
            expiresAt=_iso(session.expires_at),
        )

    def _device_key_view(self, session: Session) -> DeviceKeyView | None:
        """Unified flows on mobile (or with customer-supplied possession) use device keys; desktop never."""
        unify = session.unify
        if unify is None or (session.flow_type != "mobile" and unify.possession_type == "mobile"):
            return None
        if session.next_step not in POSSESSION_STEPS:
            return None
        return DeviceKeyView(
            nonce=unify.nonce,
            deviceId=unify.requested_device_id,
            registerKey=not (unify.proven_device_id or unify.rebind_device_id or unify.registered_device_id),
        )


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
