"""Connect workflow, step 2 (a Distributed Map's child task): verify every row of one chunk, writing
the chunk's results object.

A row is verified exactly as ``/v3/verify`` verifies one item (``verify``: ``VerifyService.verify_many``
with the client's ``Caller``: each row decided by the same code path, then the chunk's passing rows
enrolled in Identity Manager together, in a few AWS calls for the chunk). A ``PhoneIdError`` of a row
is that row's Error and Error Message in the output file; a throttled upstream
(``phoneid.domain.connect.errors.is_throttling``) raises ``ChunkThrottled`` for the whole chunk, which
the state machine retries with backoff (rows verified before the throttling are verified again then:
enrollment is idempotent per identity's place). Any other failure fails the task; a chunk that never
gets its results object has its rows written to the error file as ``ERR_PROCESSING_FAILED`` by
Deliver. A retried task whose results object exists returns what it stands for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from phoneid.api.connect_steps import ChunkVerified
from phoneid.domain.clients import Caller
from phoneid.domain.connect.batch import Batch, BatchState
from phoneid.domain.connect.errors import BatchNotFound, ChunkThrottled, is_throttling
from phoneid.domain.connect.names import chunk_key, result_key
from phoneid.domain.connect.rows import DetailRow
from phoneid.domain.connect.writer import RowOutcome, error_outcome, verified_outcome
from phoneid.domain.decisions import DecisionRecord, Kind
from phoneid.domain.errors import PhoneIdError, Unauthorized
from phoneid.domain.signals import SignalSourceError
from phoneid.domain.verification import VerificationType, VerifyItem
from phoneid.ports import BatchStates, ClientStore, Clock, ObjectStore
from phoneid.services.connect.work_objects import json_line, json_lines
from phoneid.services.decision_log import DecisionLog

if TYPE_CHECKING:
    from phoneid.services.verify import Verified

logger = Logger(child=True)

# ``VerifyService.verify_many``: the items, in order, each verified or its error.
VerifyMany = Callable[[Caller, Sequence[VerifyItem]], "list[Verified | PhoneIdError]"]


class VerifyChunkStep:
    def __init__(
        self,
        objects: ObjectStore,
        states: BatchStates,
        clients: ClientStore,
        verify: VerifyMany,
        decisions: DecisionLog,
        clock: Clock,
    ) -> None:
        self._objects = objects
        self._states = states
        self._clients = clients
        self._verify = verify
        self._decisions = decisions
        self._clock = clock

    def run(self, batch_id: str, chunk: int, key: str) -> ChunkVerified:
        """Verify every row of one chunk, writing its results object."""
        batch = self._states.get(batch_id)
        if batch is None or batch.state != BatchState.VERIFYING or batch.verification_type is None:
            raise BatchNotFound(f"batch {batch_id} is not being verified")
        if key != chunk_key(batch_id, chunk) or not 0 <= chunk < batch.chunks:
            raise ValueError(f"chunk {chunk} of batch {batch_id} is not {key!r}")
        results = result_key(batch_id, chunk)
        if self._objects.exists(results):  # a retried task: the results stand as first written
            outcomes = [RowOutcome.from_json(data) for data in json_lines(self._objects.iter_lines(results))]
            return _verified(chunk, outcomes)
        started = self._clock.now()
        rows = [DetailRow.from_json(data) for data in json_lines(self._objects.iter_lines(key))]
        caller = self._caller(batch)
        verification_type = VerificationType(batch.verification_type)
        decided = self._verify_rows(caller, verification_type, rows, chunk)
        self._keep(batch, chunk, rows, [verified for verified, _ in decided], started)
        outcomes = [outcome for _, outcome in decided]
        self._objects.put_text(results, "".join(json_line(outcome.to_json()) for outcome in outcomes))
        verified = _verified(chunk, outcomes)
        logger.info("connect chunk verified", extra={"batchId": batch_id, **verified.to_json()})
        return verified

    def _keep(
        self,
        batch: Batch,
        chunk: int,
        rows: list[DetailRow],
        verified: list[Verified | PhoneIdError],
        started: datetime,
    ) -> None:
        """Each row's decision record, the chunk's tallies counted once (a retried chunk rewrites)."""
        client_id = batch.client_id
        if not client_id:
            return
        ended = self._clock.now()
        ids = [f"{batch.batch_id}#{row.line}" for row in rows]

        def records() -> list[DecisionRecord]:
            return [
                self._decisions.of_verification(
                    client_id,
                    decision_id,
                    Kind.CONNECT,
                    outcome,
                    flow=batch.verification_type,
                    started_at=started,
                    ended_at=ended,
                    client_request_id=None,
                    phone_number=row.phone_number or None,
                )
                for decision_id, row, outcome in zip(ids, rows, verified, strict=True)
            ]

        self._decisions.keep(ids, records, once=f"{batch.batch_id}#{chunk}")

    def _caller(self, batch: Batch) -> Caller | None:
        client = self._clients.get(batch.client_id or "")
        return client.as_caller() if client is not None and client.enabled else None

    def _verify_rows(
        self, caller: Caller | None, verification_type: VerificationType, rows: list[DetailRow], chunk: int
    ) -> list[tuple[Verified | PhoneIdError, RowOutcome]]:
        """Each row's verification (or error) and its line of the output file."""
        if caller is None:
            refused = Unauthorized("Unauthorized: the client's credentials are disabled or removed")
            return [(refused, error_outcome(row, str(refused.code), refused.message)) for row in rows]
        items = [
            VerifyItem(
                phone_number=row.phone_number,
                verification_type=verification_type,
                first_name=row.first_name or None,
                last_name=row.last_name or None,
                client_customer_id=row.client_customer_id or None,
                attributes=((row.attribute_type, row.attribute_value),) if row.partner else (),
            )
            for row in rows
        ]
        try:
            verified = self._verify(caller, items)
        except SignalSourceError as error:
            if is_throttling(error):
                raise ChunkThrottled(f"chunk {chunk}: an upstream service is throttling") from error
            raise
        return [
            (outcome, _row_outcome(row, outcome, chunk)) for row, outcome in zip(rows, verified, strict=True)
        ]


def _row_outcome(row: DetailRow, outcome: Verified | PhoneIdError, chunk: int) -> RowOutcome:
    if isinstance(outcome, PhoneIdError):
        if is_throttling(outcome):
            raise ChunkThrottled(f"chunk {chunk}: an upstream service is throttling") from outcome
        return error_outcome(row, str(outcome.code), outcome.message)
    return verified_outcome(
        row,
        passed=outcome.success,
        evaluation=outcome.evaluation,
        assurance_level=outcome.assurance.level,
        assurance_reasons=outcome.assurance.reasons,
        phone_alias=outcome.phone_alias,
        service_id=outcome.service_id,
    )


def _verified(chunk: int, outcomes: Sequence[RowOutcome]) -> ChunkVerified:
    return ChunkVerified(chunk, rows=len(outcomes), passed=sum(1 for o in outcomes if o.passed))
