"""SessionSteps: a change decided on the session read, written if nothing changed meanwhile."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime

import pytest

from phoneid.domain.errors import InternalError
from phoneid.domain.flow import Step
from phoneid.domain.session import Session
from phoneid.services.sessions import SessionSteps
from tests.fakes import FakeClock, InMemorySessionStore
from tests.harness import LogRecorder


class AlwaysChanging(InMemorySessionStore):
    """Another writer wins every race: each write finds a newer version."""

    def save(self, old: Session, new: Session, now: datetime, keys: object = ()) -> Session:
        current = self.items[(old.client_id, old.correlation_id)]
        self.items[(old.client_id, old.correlation_id)] = replace(current, version=current.version + 1)
        return super().save(old, new, now)


def test_a_session_that_changes_under_every_attempt_is_an_8000_with_a_logged_reference(
    logged: LogRecorder,
) -> None:
    clock = FakeClock()
    store = AlwaysChanging()
    store.create(Session("client", "flow", "mobile", clock.now(), Step.VALIDATE))
    steps = SessionSteps(store, clock)

    with pytest.raises(InternalError) as refused:
        steps.update("client", "flow", lambda session: (session, None))

    found = re.search(r"\(reference ([0-9a-f]{12})\)$", refused.value.message)
    assert found, refused.value.message
    records = [json.loads(line) for line in logged.lines]
    assert any(r.get("reference") == found.group(1) and r.get("correlationId") == "flow" for r in records)
