"""SMS OTP: a code sent to the number, and the customer entering it."""

from __future__ import annotations

import secrets
from dataclasses import replace

from aws_lambda_powertools import Logger

from phoneid.api.client_models import ClientSession
from phoneid.domain import possession as rules
from phoneid.domain.offer import POSSESSION_STEPS, MethodOffer
from phoneid.domain.possession import Method, PossessionClosed, PossessionState
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import Session
from phoneid.domain.tokens import FlowToken
from phoneid.ports import Clock, CodeMac
from phoneid.services.possession.presenter import Presenter
from phoneid.services.possession.sending import SmsSending
from phoneid.services.possession.shared import SANDBOX_CODE, session_limits
from phoneid.services.sessions import SessionSteps

logger = Logger(child=True)


class OtpStep:
    def __init__(
        self,
        *,
        steps: SessionSteps,
        catalogue: Catalogue | None,
        mac: CodeMac,
        clock: Clock,
        offer: MethodOffer,
        sending: SmsSending,
        presenter: Presenter,
    ) -> None:
        self._steps = steps
        self._catalogue = catalogue
        self._mac = mac
        self._clock = clock
        self._offer = offer
        self._sending = sending
        self._presenter = presenter

    def send(self, token: FlowToken, phone_text: str | None) -> ClientSession:
        codes: list[str] = []

        def record(session: Session, state: PossessionState) -> Session:
            code = self._new_code(session)
            codes[:] = [code]
            digest = self._mac.digest(_mac_message(session.correlation_id, state.sends, code))
            return replace(session, possession=rules.otp_sent(state, digest, self._clock.now()))

        def prepare_text(session: Session) -> str:
            return self._otp_text(session, codes[0])

        return self._sending.send(token, Method.OTP, phone_text, record, prepare_text, "otp")

    def _new_code(self, session: Session) -> str:
        user = self._offer.user(session)
        if user is not None:
            # Sandbox: 1234 passes for users scripted so; for the others no code passes.
            return SANDBOX_CODE if user.signals.get("otp") == SANDBOX_CODE else secrets.token_hex(16)
        return "".join(secrets.choice("0123456789") for _ in range(session.otp_length))

    def _otp_text(self, session: Session, code: str) -> str:
        if self._catalogue is not None:
            return f"PhoneID Sandbox: enter {SANDBOX_CODE} to pass or 1111 to fail"
        template = session.sms_message or rules.DEFAULT_OTP_MESSAGE
        return template.format(code=code)

    def verify(self, token: FlowToken, otp: str) -> ClientSession:
        def decide(session: Session) -> tuple[Session, None]:
            if session.next_step not in POSSESSION_STEPS:
                raise PossessionClosed("This session no longer accepts possession steps")
            state = session.possession
            correct = state.code_digest is not None and self._mac.matches(
                _mac_message(session.correlation_id, state.sends, otp), state.code_digest
            )
            updated = rules.otp_entered(
                state, session_limits(session, token.caller), correct, self._clock.now()
            )
            return replace(session, possession=updated), None

        session, _ = self._steps.update(token.client_id, token.correlation_id, decide)
        logger.info(
            "otp entered",
            extra={"correlationId": session.correlation_id, "status": session.possession.status.value},
        )
        return self._presenter.present(session, token.caller)


def _mac_message(correlation_id: str, send_number: int, code: str) -> str:
    # Bound to the session and to the send: a code is worthless in another session or after a resend.
    return f"{correlation_id}:{send_number}:{code}"
