"""The client API: what the customer's device does between /v3/start and /v3/validate.

Every outcome is recorded on the session with one conditional write (``SessionSteps.update``), so
``validate`` (and the unified flow's status) read one truth. The client's facts (flags, countries,
solution) come with the flow's token from the authorizer. One module per step:

- ``flow_type``: a unified flow's client choosing mobile or desktop;
- ``mobile_auth``: the redirect to the operator and its callback;
- ``otp``: the SMS code sent and entered;
- ``instant_link``: the link sent and opened, and the desktop's WebSocket;
- ``sending``: what a code and a link share: the number checked, the budgets, send after the write;
- ``presenter``: what the client SDK sees of a session;
- ``shared``: the check each step makes first, the session's limits, the Sandbox's code.
"""

from __future__ import annotations

from phoneid.api.client_models import ClientSession
from phoneid.domain.clients import Caller
from phoneid.domain.offer import MethodOffer
from phoneid.domain.possession import LinkUnusable, PossessionState, Status
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import Session
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
from phoneid.services.possession.flow_type import FlowTypeChoice
from phoneid.services.possession.instant_link import InstantLinkStep
from phoneid.services.possession.mobile_auth import MobileAuthStep
from phoneid.services.possession.otp import OtpStep
from phoneid.services.possession.presenter import Presenter
from phoneid.services.possession.sending import SmsSending
from phoneid.services.possession.shared import MethodUnavailable
from phoneid.services.sessions import SessionSteps
from phoneid.services.staged import Stack

__all__ = ["FlowToken", "LinkUnusable", "MethodUnavailable", "Possession", "PossessionState", "Status"]


class Possession:
    """The client API's steps, wired on the same session steps, stores and clock."""

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
        self._presenter = Presenter(catalogue=catalogue, websocket_url=websocket_url, offer=offer)
        sending = SmsSending(
            steps=steps,
            sessions=sessions,
            catalogue=catalogue,
            sms=sms,
            budget=budget,
            clock=clock,
            stack=stack,
            offer=offer,
            presenter=self._presenter,
        )
        self._flow_type = FlowTypeChoice(steps=steps, presenter=self._presenter)
        self._mobile_auth = MobileAuthStep(
            steps=steps,
            sessions=sessions,
            clients=clients,
            carrier=carrier,
            clock=clock,
            offer=offer,
            presenter=self._presenter,
        )
        self._otp = OtpStep(
            steps=steps,
            catalogue=catalogue,
            mac=mac,
            clock=clock,
            offer=offer,
            sending=sending,
            presenter=self._presenter,
        )
        self._instant_link = InstantLinkStep(
            steps=steps, sessions=sessions, notifier=notifier, clock=clock, sending=sending
        )

    def view(self, token: FlowToken) -> ClientSession:
        return self.present(self._steps.load(token.client_id, token.correlation_id), token.caller)

    def present(self, session: Session, caller: Caller, redirect: str | None = None) -> ClientSession:
        return self._presenter.present(session, caller, redirect)

    def choose_flow(self, token: FlowToken, flow_type: str | None) -> ClientSession:
        if flow_type is None:
            return self.view(token)
        return self._flow_type.choose(token, flow_type)

    def mobile_auth(self, token: FlowToken, redirect_uri: str) -> ClientSession:
        return self._mobile_auth.begin(token, redirect_uri)

    def mobile_auth_callback(self, state: str, code: str | None, redirect_uri: str) -> ClientSession:
        return self._mobile_auth.callback(state, code, redirect_uri)

    def send_otp(self, token: FlowToken, phone_text: str | None) -> ClientSession:
        return self._otp.send(token, phone_text)

    def verify_otp(self, token: FlowToken, otp: str) -> ClientSession:
        return self._otp.verify(token, otp)

    def send_link(self, token: FlowToken, phone_text: str | None, link_base: str) -> ClientSession:
        return self._instant_link.send(token, phone_text, link_base)

    def select_link(self, link_token: str) -> str:
        return self._instant_link.select(link_token)

    def connect_socket(self, token: FlowToken, endpoint: str, connection_id: str) -> None:
        self._instant_link.connect_socket(token, endpoint, connection_id)
