"""Instant Link: a link texted to the number; opening it on the phone proves possession, and the
desktop waiting on its WebSocket is told."""

from __future__ import annotations

import secrets
from dataclasses import replace

from aws_lambda_powertools import Logger

from phoneid.api.client_models import ClientSession
from phoneid.domain import possession as rules
from phoneid.domain.errors import InvalidCorrelationId, PhoneIdError
from phoneid.domain.offer import POSSESSION_STEPS
from phoneid.domain.possession import LinkUnusable, Method, PossessionState
from phoneid.domain.session import Session, Socket
from phoneid.domain.tokens import FlowToken
from phoneid.ports import Clock, SessionStore, SocketNotifier
from phoneid.services.possession.sending import SmsSending
from phoneid.services.possession.shared import MethodUnavailable, secret_hash
from phoneid.services.sessions import SessionSteps

logger = Logger(child=True)

LINK_MESSAGE = "Tap to verify your phone number: {link} (expires in 3 minutes)"


class InstantLinkStep:
    def __init__(
        self,
        *,
        steps: SessionSteps,
        sessions: SessionStore,
        notifier: SocketNotifier,
        clock: Clock,
        sending: SmsSending,
    ) -> None:
        self._steps = steps
        self._sessions = sessions
        self._notifier = notifier
        self._clock = clock
        self._sending = sending

    def send(self, token: FlowToken, phone_text: str | None, link_base: str) -> ClientSession:
        link_token = secrets.token_urlsafe(24)  # 192 bits

        def record(session: Session, state: PossessionState) -> Session:
            updated = rules.link_sent(state, secret_hash(link_token), self._clock.now())
            return replace(session, possession=updated)

        def prepare_text(session: Session) -> str:
            self._sessions.put_pointer("link", secret_hash(link_token), session)  # what the link opens
            return LINK_MESSAGE.format(link=f"{link_base}/l/{link_token}")

        return self._sending.send(
            token, Method.INSTANT_LINK, phone_text, record, prepare_text, "instant link"
        )

    def select(self, link_token: str) -> str:
        """The customer opened the link on the phone: record possession, tell the desktop, redirect."""
        digest = secret_hash(link_token)
        pointer = self._sessions.find_pointer("link", digest, self._clock.now())
        if pointer is None:
            raise LinkUnusable()

        def decide(session: Session) -> tuple[Session, None]:
            state = session.possession
            if session.next_step not in POSSESSION_STEPS or state.decided or state.link_digest != digest:
                raise LinkUnusable()
            try:
                updated = rules.link_selected(state, self._clock.now())
            except PhoneIdError:
                raise LinkUnusable() from None
            return replace(session, possession=updated), None

        try:
            session, _ = self._steps.update(*pointer, decide)
        except InvalidCorrelationId:
            raise LinkUnusable() from None
        if session.socket is not None:
            self._notifier.notify(
                session.socket.endpoint,
                session.socket.connection_id,
                {"type": "possession", "status": session.possession.status.value},
            )
        logger.info("instant link selected", extra={"correlationId": session.correlation_id})
        assert session.final_target_url is not None
        return session.final_target_url

    def connect_socket(self, token: FlowToken, endpoint: str, connection_id: str) -> None:
        def decide(session: Session) -> tuple[Session, None]:
            if session.flow_type != "desktop":
                raise MethodUnavailable("Only desktop flows wait on a WebSocket")
            return replace(session, socket=Socket(endpoint, connection_id)), None

        self._steps.update(token.client_id, token.correlation_id, decide)
