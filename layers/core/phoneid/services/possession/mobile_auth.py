"""Mobile Auth: the customer is sent to the operator (CAMARA Number Verification), whose redirect
back is exchanged and its answer recorded once."""

from __future__ import annotations

import secrets
from dataclasses import replace

from aws_lambda_powertools import Logger

from phoneid.api.client_models import ClientSession
from phoneid.domain import possession as rules
from phoneid.domain.clients import Caller
from phoneid.domain.errors import InvalidCorrelationId
from phoneid.domain.offer import MethodOffer
from phoneid.domain.possession import Method, MobileAuth
from phoneid.domain.session import Session
from phoneid.domain.tokens import FlowToken
from phoneid.ports import CarrierVerifier, ClientStore, Clock, SessionStore
from phoneid.services.possession.presenter import Presenter
from phoneid.services.possession.shared import require_open, secret_hash
from phoneid.services.sessions import SessionSteps

logger = Logger(child=True)


class MobileAuthStep:
    def __init__(
        self,
        *,
        steps: SessionSteps,
        sessions: SessionStore,
        clients: ClientStore,
        carrier: CarrierVerifier | None,
        clock: Clock,
        offer: MethodOffer,
        presenter: Presenter,
    ) -> None:
        self._steps = steps
        self._sessions = sessions
        self._clients = clients
        self._carrier = carrier
        self._clock = clock
        self._offer = offer
        self._presenter = presenter

    def begin(self, token: FlowToken, redirect_uri: str) -> ClientSession:
        state_secret = secrets.token_urlsafe(32)
        carrier = self._carrier

        def decide(session: Session) -> tuple[Session, None]:
            require_open(session, Method.MOBILE_AUTH, self._offer.methods(session))
            possession = replace(
                session.possession,
                mobile_auth=MobileAuth.REDIRECTED,
                mobile_auth_state=secret_hash(state_secret),
            )
            return replace(session, possession=possession), None

        session, _ = self._steps.update(token.client_id, token.correlation_id, decide)
        self._sessions.put_pointer("mobile-auth", secret_hash(state_secret), session)
        assert carrier is not None  # offered only when configured
        redirect = carrier.begin(
            state=state_secret, redirect_uri=redirect_uri, phone_number=session.phone_number
        )
        return self._presenter.present(session, token.caller, redirect=redirect.url)

    def callback(self, state: str, code: str | None, redirect_uri: str) -> ClientSession:
        """The operator's redirect: exchange the code, ask the network, record the answer once."""
        pointer = self._sessions.find_pointer("mobile-auth", secret_hash(state), self._clock.now())
        if pointer is None:
            raise InvalidCorrelationId("Unknown or expired Mobile Auth state")
        session = self._steps.load(*pointer)
        carrier = self._carrier
        if carrier is None or session.possession.mobile_auth_state != secret_hash(state):
            raise InvalidCorrelationId("Unknown or expired Mobile Auth state")
        result = (
            carrier.finish(code=code, redirect_uri=redirect_uri, phone_number=session.phone_number)
            if code
            else None
        )

        def decide(current: Session) -> tuple[Session, None]:
            possession = current.possession
            if (
                possession.mobile_auth_state != secret_hash(state)
                or possession.mobile_auth != MobileAuth.REDIRECTED
            ):
                raise InvalidCorrelationId("This Mobile Auth state was already used")
            possession = replace(possession, mobile_auth_state=None)
            if result is not None and result.verified:
                number = current.phone_number or result.phone_number
                updated = replace(possession, mobile_auth=MobileAuth.PASSED)
                return replace(
                    current, possession=rules.passed(updated, Method.MOBILE_AUTH), phone_number=number
                ), None
            possession = replace(possession, mobile_auth=MobileAuth.FAILED, last_error="mobile-auth-failed")
            if not self._offer.otp(current):
                possession = rules.failed(possession, Method.MOBILE_AUTH, "mobile-auth-failed")
            return replace(current, possession=possession), None

        caller = self._caller(session)
        session, _ = self._steps.update(*pointer, decide, loaded=session)
        logger.info(
            "mobile auth",
            extra={"correlationId": session.correlation_id, "status": session.possession.mobile_auth.value},
        )
        return self._presenter.present(session, caller)

    def _caller(self, session: Session) -> Caller:
        """The session's client, read: for the one call that comes without an authorizer's context."""
        client = self._clients.get(session.client_id)
        if client is None or not client.enabled:
            raise InvalidCorrelationId()
        return client.as_caller()
