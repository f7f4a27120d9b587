"""A unified flow's client says whether it is the mobile or the desktop one, before starting."""

from __future__ import annotations

from dataclasses import replace

from phoneid.api.client_models import ClientSession
from phoneid.domain.errors import MalformedRequest
from phoneid.domain.possession import MobileAuth
from phoneid.domain.session import Session
from phoneid.domain.tokens import FlowToken
from phoneid.services.possession.presenter import Presenter
from phoneid.services.possession.shared import MethodUnavailable
from phoneid.services.sessions import SessionSteps


class FlowTypeChoice:
    def __init__(self, *, steps: SessionSteps, presenter: Presenter) -> None:
        self._steps = steps
        self._presenter = presenter

    def choose(self, token: FlowToken, flow_type: str) -> ClientSession:
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
        return self._presenter.present(session, token.caller)
