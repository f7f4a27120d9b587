"""Reading a caller's session and changing it with one conditional write, shared by every flow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from aws_lambda_powertools import Logger

from phoneid.domain.devicekeys import DeviceKey
from phoneid.domain.errors import InternalError, InvalidCorrelationId
from phoneid.domain.flow import Step, check_turn
from phoneid.domain.session import Session, TransitionRejected
from phoneid.ports import Clock, SessionStore

logger = Logger(child=True)

Result = TypeVar("Result")

# Concurrent writers are few (one customer, one integrator); a handful of retries always settles.
_ATTEMPTS = 5


def require_turn(session: Session, called: Step) -> None:
    check_turn(called, session.next_step, session.answered, session.correlation_id)


class SessionSteps:
    def __init__(self, sessions: SessionStore, clock: Clock) -> None:
        self._sessions = sessions
        self._clock = clock

    def load(self, client_id: str, correlation_id: str) -> Session:
        session = self._sessions.get(client_id, correlation_id)
        # Unknown, expired and another client's sessions are indistinguishable to the caller.
        if session is None or session.expired(self._clock.now()):
            raise InvalidCorrelationId()
        return session

    def update(
        self,
        client_id: str,
        correlation_id: str,
        decide: Callable[[Session], tuple[Session, Result]],
        keys: Callable[[Result], Sequence[DeviceKey]] = lambda _: (),
        *,
        loaded: Session | None = None,
    ) -> tuple[Session, Result]:
        """Read, decide, write if nothing changed meanwhile; else decide again on the fresh session.

        ``decide`` is pure apart from reads: it raises the caller's error, or returns the new session
        and the answer. ``keys`` names device keys the answer binds, written in the same transaction.
        Side effects that must happen once (an SMS) come after this returns. ``loaded``: the session
        this request has just read, decided on first instead of reading it again.
        """
        for _ in range(_ATTEMPTS):
            session = loaded if loaded is not None else self.load(client_id, correlation_id)
            loaded = None
            updated, result = decide(session)
            try:
                return self._sessions.save(session, updated, self._clock.now(), keys(result)), result
            except TransitionRejected:
                continue
        error = InternalError.referenced(": the session is changing too fast")
        logger.error(
            "session changed under every attempt",
            extra={"reference": error.reference, "correlationId": correlation_id, "attempts": _ATTEMPTS},
        )
        raise error
