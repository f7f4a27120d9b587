"""Connect workflow, step 3 (Deliver): merge the chunks' results into the output file and the row
errors into the error file, in input order and streamed through multipart writers; check that every
detail row is in one of them; send the "processed" email; clean up.

A batch already delivered or failed returns what it returned before, sending nothing; its state
change is written before the "processed" email, so that email goes at most once. Counts that do not
add up raise ``BatchCountMismatch`` (the execution fails loudly, the work objects stay).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import chain

from aws_lambda_powertools import Logger

from phoneid.api.connect_steps import Delivered
from phoneid.domain.connect.batch import Batch, BatchState
from phoneid.domain.connect.errors import BatchCountMismatch, BatchNotFound
from phoneid.domain.connect.names import (
    chunk_key,
    download_key,
    errors_file_name,
    errors_key,
    output_file_name,
    result_key,
    work_prefix,
)
from phoneid.domain.connect.rows import DetailRow
from phoneid.domain.connect.stats import PROCESSING_FAILED_CODE, BatchStats
from phoneid.domain.connect.writer import (
    CsvLines,
    RowOutcome,
    error_header_record,
    error_record,
    header_record,
    trailer_record,
)
from phoneid.ports import BatchStates, Clock, ConnectProfiles, ObjectStore
from phoneid.services.connect.emails import ConnectEmails
from phoneid.services.connect.work_objects import json_lines

logger = Logger(child=True)


@dataclass(frozen=True)
class DeliverStep:
    objects: ObjectStore
    states: BatchStates
    profiles: ConnectProfiles
    emails: ConnectEmails
    clock: Clock

    def run(self, batch_id: str) -> Delivered:
        """Merge the results into the output file and the row errors into the error file, check the
        count, email, clean up."""
        batch = self.states.get(batch_id)
        if batch is None:
            raise BatchNotFound(f"batch {batch_id} has no record")
        if batch.state in (BatchState.DELIVERED, BatchState.FAILED):
            return _delivered(batch)
        if batch.state != BatchState.VERIFYING or batch.verification_type is None:
            raise BatchNotFound(f"batch {batch_id} is {batch.state.value}, not verifying")
        stats = BatchStats.from_counts(batch.counts, started_at=batch.created_at)
        missing = [n for n in range(batch.chunks) if not self.objects.exists(result_key(batch_id, n))]
        output_rows = self._write_output(batch, stats, set(missing))
        error_rows = self._write_errors(batch, stats, missing)
        stats.finished_at = self.clock.now()
        balanced = output_rows + error_rows == stats.rows_read
        reason = None
        if not balanced:
            reason = (
                f"count mismatch: {output_rows} output rows + {error_rows} error rows "
                f"!= {stats.rows_read} detail rows read"
            )
        elif missing:
            reason = f"{len(missing)} chunk(s) without results: {stats.processing_failed} rows not processed"
        done = replace(
            batch,
            state=BatchState.DELIVERED if reason is None else BatchState.FAILED,
            counts=stats.counts(),
            updated_at=stats.finished_at,
            reason=reason,
        )
        if not self.states.update(done, BatchState.VERIFYING):  # another delivery finished first
            current = self.states.get(batch_id)
            return _delivered(current or done)
        logger.info(
            "connect batch delivered",
            extra={
                "batchId": batch_id,
                "state": done.state.value,
                "output": output_rows,
                "errors": error_rows,
            },
        )
        if reason is not None:
            self.emails.batch_failed(done, reason)
        if not balanced:
            raise BatchCountMismatch(f"batch {batch_id}: {reason}")
        self.emails.processed(batch, self.profiles.get_by_name(batch.client_name), stats)
        self.objects.delete_prefix(work_prefix(batch_id))
        return _delivered(done)

    def _write_output(self, batch: Batch, stats: BatchStats, missing: set[int]) -> int:
        lines = CsvLines()
        sink = self.objects.open_writer(download_key(batch.client_name, output_file_name(batch.file_name)))
        count = 0
        try:
            sink.write(lines.line(header_record()))
            for n in range(batch.chunks):
                if n in missing:
                    continue
                for data in json_lines(self.objects.iter_lines(result_key(batch.batch_id, n))):
                    outcome = RowOutcome.from_json(data)
                    sink.write(lines.line(outcome.cells))
                    _count(stats, outcome)
                    count += 1
            sink.write(lines.line(trailer_record(count)))
        finally:
            sink.close()
        return count

    def _write_errors(self, batch: Batch, stats: BatchStats, missing: list[int]) -> int:
        lines = CsvLines()
        sink = self.objects.open_writer(download_key(batch.client_name, errors_file_name(batch.file_name)))
        count = 0
        try:
            sink.write(lines.line(error_header_record(batch.verification_type or "")))
            for code, row in heapq.merge(
                self._rejected_rows(batch.batch_id),
                self._unprocessed_rows(batch.batch_id, missing),
                key=lambda pair: pair[1].line,
            ):
                sink.write(lines.line(error_record(row, code)))
                if code == PROCESSING_FAILED_CODE:
                    stats.processing_failed += 1
                count += 1
            sink.write(lines.line(trailer_record(count)))
        finally:
            sink.close()
        return count

    def _rejected_rows(self, batch_id: str) -> Iterator[tuple[str, DetailRow]]:
        key = errors_key(batch_id)
        if not self.objects.exists(key):
            return
        for data in json_lines(self.objects.iter_lines(key)):
            yield str(data["code"]), DetailRow.from_json(data)

    def _unprocessed_rows(self, batch_id: str, missing: list[int]) -> Iterator[tuple[str, DetailRow]]:
        """The rows of the chunks without results, in input order (chunks are in input order)."""
        return chain.from_iterable(self._chunk_rows_failed(batch_id, n) for n in missing)

    def _chunk_rows_failed(self, batch_id: str, chunk: int) -> Iterator[tuple[str, DetailRow]]:
        key = chunk_key(batch_id, chunk)
        if not self.objects.exists(key):  # the rows are gone: the count check says so
            return
        for data in json_lines(self.objects.iter_lines(key)):
            yield PROCESSING_FAILED_CODE, DetailRow.from_json(data)


def _count(stats: BatchStats, outcome: RowOutcome) -> None:
    if outcome.error is not None:
        stats.errors_by_code[outcome.error] = stats.errors_by_code.get(outcome.error, 0) + 1
    elif outcome.passed:
        stats.verified += 1
    else:
        stats.not_verified += 1
        for code in outcome.reasons:
            stats.failed_by_reason[str(code)] = stats.failed_by_reason.get(str(code), 0) + 1
    if outcome.enrolled:
        stats.enrolled += 1


def _delivered(batch: Batch) -> Delivered:
    return Delivered(
        batch_id=batch.batch_id,
        state=batch.state,
        output=download_key(batch.client_name, output_file_name(batch.file_name)),
        errors=download_key(batch.client_name, errors_file_name(batch.file_name)),
        stats=BatchStats.from_counts(batch.counts, batch.created_at, batch.updated_at),
    )
