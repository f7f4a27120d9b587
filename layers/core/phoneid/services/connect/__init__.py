"""Connect batches: the workflow's steps, one service each, as the state machine runs them
(``statemachines/connect.asl.json``, docs/connect.md#the-workflow):

- ``validate``: claim the upload's batch, check the file, cut its valid rows into chunks;
- ``verify_chunk``: verify one chunk's rows as ``/v3/verify`` verifies one item;
- ``deliver``: the output and error files, the count check, the "processed" email;
- ``fail``: the catch-all, ending a batch ``failed`` after any step failed.

Each handler reads its step's input into a typed one, and each step returns a typed result that its
handler serialises for the state machine: both in ``phoneid.api.connect_steps``.
Files are streamed: what stays in memory is one chunk, and, while validating, the duplicate-key
table. The emails are in ``emails``; the work objects' format in ``work_objects``.
"""

from __future__ import annotations

from collections.abc import Sequence

from phoneid.domain.phone import Region
from phoneid.ports import BatchStates, ClientStore, Clock, ConnectProfiles, Mailer, ObjectStore
from phoneid.services.connect.deliver import DeliverStep
from phoneid.services.connect.emails import ConnectEmails
from phoneid.services.connect.fail import FailStep
from phoneid.services.connect.validate import CHUNK_ROWS, ValidateStep
from phoneid.services.connect.verify_chunk import VerifyChunkStep, VerifyMany
from phoneid.services.decision_log import DecisionLog

__all__ = ["CHUNK_ROWS", "ConnectBatches", "VerifyMany"]


class ConnectBatches:
    """The four steps, wired on the same stores, mailer and clock."""

    def __init__(
        self,
        objects: ObjectStore,
        states: BatchStates,
        profiles: ConnectProfiles,
        mailer: Mailer,
        clients: ClientStore,
        verify: VerifyMany,
        decisions: DecisionLog,
        clock: Clock,
        region: Region,
        chunk_rows: int = CHUNK_ROWS,
        operator_emails: Sequence[str] = (),
    ) -> None:
        emails = ConnectEmails(mailer, operator_emails)
        self.fail = FailStep(objects, states, profiles, emails, clock)
        self.validate = ValidateStep(
            objects, states, profiles, clients, emails, self.fail, clock, region, chunk_rows
        )
        self.verify_chunk = VerifyChunkStep(objects, states, clients, verify, decisions, clock)
        self.deliver = DeliverStep(objects, states, profiles, emails, clock)
