"""Sending a possession text (a code or a link): the number checked, the text counted in the hourly
budgets, the send recorded on the session, then sent. Messages are sent only after the write that
counts them has succeeded, so a retried write never sends twice; a message that could not be sent
is taken back from the session and the SMS budgets, so the retried request counts it once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from aws_lambda_powertools import Logger

from phoneid.api.client_models import ClientSession
from phoneid.domain import possession as rules
from phoneid.domain.clients import Caller
from phoneid.domain.errors import MalformedRequest, PhoneIdError, UnauthorizedForCountry
from phoneid.domain.offer import MethodOffer
from phoneid.domain.phone import InvalidPhoneNumber, PhoneNumber, mask, parse_phone
from phoneid.domain.possession import Method, PossessionState
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import Session, TransitionRejected
from phoneid.domain.tokens import FlowToken
from phoneid.ports import Clock, SessionStore, SmsSender
from phoneid.services.budget import SendBudget
from phoneid.services.possession.presenter import Presenter
from phoneid.services.possession.shared import require_open, session_limits
from phoneid.services.sessions import SessionSteps
from phoneid.services.staged import Stack

logger = Logger(child=True)


class SmsSending:
    def __init__(
        self,
        *,
        steps: SessionSteps,
        sessions: SessionStore,
        catalogue: Catalogue | None,
        sms: SmsSender,
        budget: SendBudget,
        clock: Clock,
        stack: Stack,
        offer: MethodOffer,
        presenter: Presenter,
    ) -> None:
        self._steps = steps
        self._sessions = sessions
        self._catalogue = catalogue
        self._sms = sms
        self._budget = budget
        self._clock = clock
        self._stack = stack
        self._offer = offer
        self._presenter = presenter

    def _number(self, session: Session, text: str | None, caller: Caller) -> PhoneNumber | None:
        """A number the customer typed, checked like the one at start, and able to receive SMS."""
        if text is None:
            if session.phone_number is None:
                raise MalformedRequest(
                    problems={"phoneNumber": "is required: no number is known for this flow"}
                )
            return None
        try:
            phone = parse_phone(text, self._stack.region)
        except InvalidPhoneNumber as error:
            raise MalformedRequest(problems={"phoneNumber": str(error)}) from None
        if phone.region != self._stack.region or not caller.may_use_country(phone.country):
            raise UnauthorizedForCountry(
                f"Unauthorized for country: cannot send to numbers of {phone.country}"
            )
        if not phone.mobile_capable:
            raise MalformedRequest(problems={"phoneNumber": "cannot receive SMS (not a mobile number)"})
        if self._catalogue is not None:
            self._catalogue.select(phone.e164, caller)
        return phone

    def _with_number(self, session: Session, phone: PhoneNumber | None) -> tuple[Session, bool]:
        if phone is None or phone.e164 == session.phone_number:
            return session, False
        user = self._catalogue.find(phone.e164) if self._catalogue else None
        scenario = user.scenario.value if user else session.sandbox_scenario
        return replace(session, phone_number=phone.e164, sandbox_scenario=scenario), True

    def send(
        self,
        token: FlowToken,
        method: Method,
        phone_text: str | None,
        record: Callable[[Session, PossessionState], Session],
        prepare_text: Callable[[Session], str],
        kind: str,
    ) -> ClientSession:
        """Check, count the text in the hourly budgets, record the send on the session, then send it.

        ``record`` puts the new code or link on the session; ``prepare_text`` readies what the text
        needs (an Instant Link's pointer) and returns the text for the session as written. When a
        step after the budget fails, the text is taken back from the budgets and the session (the
        request failed, 8000): its retry counts the one text that goes out.
        """
        loaded = self._steps.load(token.client_id, token.correlation_id)
        require_open(loaded, method, self._offer.methods(loaded))
        phone = self._number(loaded, phone_text, token.caller)
        destination = phone.e164 if phone else loaded.phone_number
        assert destination is not None
        spent = self._budget.spend(destination, token.client_id)

        def decide(session: Session) -> tuple[Session, Session]:
            require_open(session, method, self._offer.methods(session))
            numbered, new_number = self._with_number(session, phone)
            state = rules.before_send(
                numbered.possession,
                session_limits(numbered, token.caller),
                new_number=new_number or numbered.possession.numbers == 0,
            )
            return record(numbered, state), session

        written: Session | None = None
        try:
            written, unsent = self._steps.update(token.client_id, token.correlation_id, decide, loaded=loaded)
            assert written.phone_number is not None
            self._sms.send(written.phone_number, prepare_text(written))
        except Exception:
            self._budget.refund(spent)
            if written is not None:
                self._take_back(written, unsent)
            raise
        logger.info(
            f"{kind} sent",
            extra={
                "correlationId": written.correlation_id,
                "phone": mask(written.phone_number),
                "sends": written.possession.sends,
            },
        )
        return self._presenter.present(written, token.caller)

    def _take_back(self, written: Session, unsent: Session) -> None:
        """Put the session back as it was before a send that did not go out (unless it changed since)."""
        try:
            self._sessions.save(written, unsent, self._clock.now())
        except (PhoneIdError, TransitionRejected):
            logger.warning(
                "unsent text left counted on the session", extra={"correlationId": written.correlation_id}
            )
