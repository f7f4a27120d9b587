"""The client API: what the customer's device does between /v3/start and /v3/validate.

Every outcome is recorded on the session with one conditional write (``SessionSteps.update``), so
``validate`` (and the unified flow's status) read one truth. Messages are sent only after the write
that counts them has succeeded, so a retried write never sends twice; a message that could not be
sent is taken back from the session and the SMS budgets, so the retried request counts it once.
The client's facts (flags, countries, solution) come with the flow's token from the authorizer.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from aws_lambda_powertools import Logger

from phoneid.api.client_models import ClientSession, DeviceKeyView, InstantLinkView, MobileAuthView, OtpView
from phoneid.domain import possession as rules
from phoneid.domain.clients import Caller, Flag
from phoneid.domain.errors import InvalidCorrelationId, MalformedRequest, PhoneIdError, UnauthorizedForCountry
from phoneid.domain.offer import POSSESSION_STEPS, MethodOffer
from phoneid.domain.phone import InvalidPhoneNumber, PhoneNumber, mask, parse_phone
from phoneid.domain.possession import (
    LINK_LIFETIME,
    OTP_LIFETIME,
    LinkUnusable,
    Method,
    MobileAuth,
    PossessionClosed,
    PossessionLimit,
    PossessionState,
    Status,
)
from phoneid.domain.sandbox import Catalogue, TestUser
from phoneid.domain.session import Session, Socket, TransitionRejected
from phoneid.domain.tokens import FlowToken
from phoneid.ports import (
    CarrierVerifier,
    ClientStore,
    Clock,
    CodeMac,
    SessionStore,
    SmsSender,
    SocketNotifier,
)
from phoneid.services.budget import SendBudget
from phoneid.services.sessions import SessionSteps
from phoneid.services.staged import Stack

logger = Logger(child=True)

SANDBOX_CODE = "1234"
LINK_MESSAGE = "Tap to verify your phone number: {link} (expires in 3 minutes)"


class MethodUnavailable(PossessionLimit):
    default_message = "This possession method is not available for this flow"


def secret_hash(secret: str) -> str:
    """Links and OIDC states carry 128+ random bits, so SHA-256 stores them safely."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Possession:
    def __init__(
        self,
        *,
        steps: SessionSteps,
        sessions: SessionStore,
        clients: ClientStore,
        catalogue: Catalogue | None,
        sms: SmsSender,
        mac: CodeMac,
        carrier: CarrierVerifier | None,
        notifier: SocketNotifier,
        budget: SendBudget,
        clock: Clock,
        stack: Stack,
        websocket_url: str | None,
        offer: MethodOffer,
    ) -> None:
        self._steps = steps
        self._sessions = sessions
        self._clients = clients
        self._catalogue = catalogue
        self._sms = sms
        self._mac = mac
        self._carrier = carrier
        self._notifier = notifier
        self._budget = budget
        self._clock = clock
        self._stack = stack
        self._websocket_url = websocket_url
        self._offer = offer

    # --- what the client needs ---------------------------------------------------------------

    def view(self, token: FlowToken) -> ClientSession:
        return self.present(self._steps.load(token.client_id, token.correlation_id), token.caller)

    def _user(self, session: Session) -> TestUser | None:
        return self._offer.user(session)

    def _caller(self, session: Session) -> Caller:
        """The session's client, read: for the one call that comes without an authorizer's context."""
        client = self._clients.get(session.client_id)
        if client is None or not client.enabled:
            raise InvalidCorrelationId()
        return client.as_caller()

    def present(self, session: Session, caller: Caller, redirect: str | None = None) -> ClientSession:
        """What the client SDK sees of a session."""
        state = session.possession
        limits = self._rules(session, caller)
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

    def choose_flow(self, token: FlowToken, flow_type: str | None) -> ClientSession:
        """A unified flow's client says whether it is the mobile or the desktop one, before starting."""
        if flow_type is None:
            return self.view(token)

        def decide(session: Session) -> tuple[Session, None]:
            state = session.possession
            untouched = state.sends == 0 and state.mobile_auth == MobileAuth.NOT_TRIED
            if session.flow_type == flow_type:
                return session, None
            if session.unify is None or session.unify.possession_type != "mobile" or not untouched:
                raise MethodUnavailable("The flow type of this session is already set")
            if flow_type == "desktop" and not session.final_target_url:
                raise MalformedRequest(problems={"flowType": "desktop needs finalTargetUrl on unify"})
            return replace(session, flow_type=flow_type), None  # type: ignore[arg-type]

        session, _ = self._steps.update(token.client_id, token.correlation_id, decide)
        return self.present(session, token.caller)

    @staticmethod
    def _rules(session: Session, caller: Caller) -> rules.Rules:
        return rules.Rules(
            allow_otp_retry=session.allow_otp_retry,
            number_change_enabled=caller.has(Flag.PHONE_NUMBER_CHANGE),
        )

    @staticmethod
    def _require_open(session: Session, method: Method, methods: list[Method]) -> None:
        if session.next_step not in POSSESSION_STEPS:
            raise PossessionClosed("This session no longer accepts possession steps")
        session.possession.require_pending()
        if method not in methods:
            raise MethodUnavailable(f"{method.value} is not available for this flow")

    # --- Mobile Auth -------------------------------------------------------------------------

    def mobile_auth(self, token: FlowToken, redirect_uri: str) -> ClientSession:
        state_secret = secrets.token_urlsafe(32)
        carrier = self._carrier

        def decide(session: Session) -> tuple[Session, None]:
            self._require_open(session, Method.MOBILE_AUTH, self._offer.methods(session))
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
        return self.present(session, token.caller, redirect=redirect.url)

    def mobile_auth_callback(self, state: str, code: str | None, redirect_uri: str) -> ClientSession:
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
        return self.present(session, caller)

    # --- SMS: OTP and Instant Link -----------------------------------------------------------

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

    def send_otp(self, token: FlowToken, phone_text: str | None) -> ClientSession:
        codes: list[str] = []

        def record(session: Session, state: PossessionState) -> Session:
            code = self._new_code(session)
            codes[:] = [code]
            digest = self._mac.digest(_mac_message(session.correlation_id, state.sends, code))
            return replace(session, possession=rules.otp_sent(state, digest, self._clock.now()))

        def prepare_text(session: Session) -> str:
            return self._otp_text(session, codes[0])

        return self._send(token, Method.OTP, phone_text, record, prepare_text, "otp")

    def _new_code(self, session: Session) -> str:
        user = self._user(session)
        if user is not None:
            # Sandbox: 1234 passes for users scripted so; for the others no code passes.
            return SANDBOX_CODE if user.signals.get("otp") == SANDBOX_CODE else secrets.token_hex(16)
        return "".join(secrets.choice("0123456789") for _ in range(session.otp_length))

    def _otp_text(self, session: Session, code: str) -> str:
        if self._catalogue is not None:
            return f"PhoneID Sandbox: enter {SANDBOX_CODE} to pass or 1111 to fail"
        template = session.sms_message or rules.DEFAULT_OTP_MESSAGE
        return template.format(code=code)

    def verify_otp(self, token: FlowToken, otp: str) -> ClientSession:
        def decide(session: Session) -> tuple[Session, None]:
            if session.next_step not in POSSESSION_STEPS:
                raise PossessionClosed("This session no longer accepts possession steps")
            state = session.possession
            correct = state.code_digest is not None and self._mac.matches(
                _mac_message(session.correlation_id, state.sends, otp), state.code_digest
            )
            updated = rules.otp_entered(state, self._rules(session, token.caller), correct, self._clock.now())
            return replace(session, possession=updated), None

        session, _ = self._steps.update(token.client_id, token.correlation_id, decide)
        logger.info(
            "otp entered",
            extra={"correlationId": session.correlation_id, "status": session.possession.status.value},
        )
        return self.present(session, token.caller)

    def send_link(self, token: FlowToken, phone_text: str | None, link_base: str) -> ClientSession:
        link_token = secrets.token_urlsafe(24)  # 192 bits

        def record(session: Session, state: PossessionState) -> Session:
            updated = rules.link_sent(state, secret_hash(link_token), self._clock.now())
            return replace(session, possession=updated)

        def prepare_text(session: Session) -> str:
            self._sessions.put_pointer("link", secret_hash(link_token), session)  # what the link opens
            return LINK_MESSAGE.format(link=f"{link_base}/l/{link_token}")

        return self._send(token, Method.INSTANT_LINK, phone_text, record, prepare_text, "instant link")

    def _send(
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
        self._require_open(loaded, method, self._offer.methods(loaded))
        phone = self._number(loaded, phone_text, token.caller)
        destination = phone.e164 if phone else loaded.phone_number
        assert destination is not None
        spent = self._budget.spend(destination, token.client_id)

        def decide(session: Session) -> tuple[Session, Session]:
            self._require_open(session, method, self._offer.methods(session))
            numbered, new_number = self._with_number(session, phone)
            state = rules.before_send(
                numbered.possession,
                self._rules(numbered, token.caller),
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
        return self.present(written, token.caller)

    def _take_back(self, written: Session, unsent: Session) -> None:
        """Put the session back as it was before a send that did not go out (unless it changed since)."""
        try:
            self._sessions.save(written, unsent, self._clock.now())
        except (PhoneIdError, TransitionRejected):
            logger.warning(
                "unsent text left counted on the session", extra={"correlationId": written.correlation_id}
            )

    def select_link(self, link_token: str) -> str:
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


def _mac_message(correlation_id: str, send_number: int, code: str) -> str:
    # Bound to the session and to the send: a code is worthless in another session or after a resend.
    return f"{correlation_id}:{send_number}:{code}"


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


__all__ = ["FlowToken", "LinkUnusable", "MethodUnavailable", "Possession", "PossessionState", "Status"]
