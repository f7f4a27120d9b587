"""Flows that expired unanswered: each gets its decision record when DynamoDB's TTL deletes its
session (the table's stream, filtered to TTL's deletions; docs/decision-records.md#what-is-recorded).

A session is deleted by TTL a day after it expired (the grace of ``TTL_GRACE_SECONDS``); a flow whose
last answer ended it already has its record and is skipped, as are the table's pointer items. The
record's put is conditional on its id being new, so a batch the stream delivers again is counted once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from phoneid.domain.flow import Step
from phoneid.domain.session import Session
from phoneid.ports import SessionStore
from phoneid.services.decision_log import DecisionLog


class ExpiredFlows:
    def __init__(self, sessions: SessionStore, decisions: DecisionLog) -> None:
        self._sessions = sessions
        self._decisions = decisions

    def record(self, images: Iterable[Mapping[str, Any]]) -> int:
        """The records of the unanswered flows among the deleted items' images; how many."""
        kept = 0
        for image in images:
            session = self._sessions.expired(image)
            if session is None or session.next_step == Step.DONE:
                continue
            self._keep(session)
            kept += 1
        return kept

    def _keep(self, session: Session) -> None:
        self._decisions.keep([session.correlation_id], lambda: [self._decisions.of_expired(session)])
