"""Connect batches: the three steps the state machine runs — validate a file, verify a chunk, deliver.

Each step takes and returns JSON-able dicts (the state machine's task input and output). Files are
streamed: validate reads the upload a line at a time and writes chunk objects of ``chunk_rows``
rows; deliver merges the chunks' results into the output file through a multipart writer. What
stays in memory is one chunk, and, while validating, the duplicate-key table (``SeenKeys``: 32 MiB for
800,000 rows with Client Customer IDs).

A row is verified exactly as ``/v3/verify`` verifies one item (``verify``: ``VerifyService.verify_many``
with the client's ``Caller``: each row decided by the same code path, then the chunk's passing rows
enrolled in Identity Manager together, in a few AWS calls for the chunk). A ``PhoneIdError``
of a row is that row's Error and Error Message in the output file; a throttled upstream
(``phoneid.domain.connect.is_throttling``) raises ``ChunkThrottled`` for the whole chunk, which the
state machine retries with backoff (rows verified before the throttling are verified again then:
enrollment is idempotent per identity's place). Any other failure fails the task; a chunk that never
gets its results object has its rows written to the error file as ``ERR_PROCESSING_FAILED`` by
deliver, which marks the batch ``failed`` and tells the operator.

Emails. The sender is the mailer's (the SES adapter's configured address: template parameter
``ConnectEmailSender``, ``connect@phoneid.invalid`` in the local stack). Subjects:

- ``PhoneID Connect: {file} rejected ({REASON_CODE})`` — to the client's notification addresses, with
  the reason; when the file is in no onboarded client's directory, to the operator addresses;
- ``PhoneID Connect: {file} processed`` — to the client's addresses, with the statistics
  (``BatchStats.text``) and where the output and error files are; ``processed, {n} rows not
  processed`` in the subject when chunks failed;
- ``PhoneID Connect: batch {batchId} failed ({file})`` — to the operator addresses, when chunks
  failed, when the counts do not add up (``BatchCountMismatch``: the client gets no email then, and
  the work objects stay for investigation until the bucket's lifecycle expires them), or when
  validation broke off on an unexpected error (the batch is ``failed``; uploading the file again
  makes a new batch).

A file name in a subject is shortened to 100 characters and stripped of control characters. No
email carries row data.

Redelivery: ``validate`` claims the batch (a conditional put keyed by the object version's batch
id) before anything else; a second call for the same object version returns ``duplicate`` having
written nothing. ``verify_chunk`` returns the stored results object when it exists. ``deliver`` on
a batch already delivered or failed returns what it returned before, sending nothing; its state
change is written before the "processed" email, so that email goes at most once.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from itertools import chain
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from phoneid.domain.clients import Caller
from phoneid.domain.connect import (
    PROCESSING_FAILED_CODE,
    Batch,
    BatchCountMismatch,
    BatchFileName,
    BatchNotFound,
    BatchState,
    BatchStats,
    ChunkThrottled,
    ConnectProfile,
    batch_id_of,
    chunk_key,
    download_key,
    errors_file_name,
    errors_key,
    is_throttling,
    manifest_key,
    output_file_name,
    parse_file_name,
    parse_upload_key,
    rejected_file_name,
    result_key,
    work_prefix,
)
from phoneid.domain.connect_files import (
    BatchFileReader,
    CsvLines,
    DetailRow,
    FileRejected,
    Rejection,
    RowChecks,
    RowOutcome,
    error_header_record,
    error_outcome,
    error_record,
    header_record,
    rejected_file,
    trailer_record,
    verified_outcome,
)
from phoneid.domain.errors import PhoneIdError, Unauthorized
from phoneid.domain.phone import Region
from phoneid.domain.signals import SignalSourceError
from phoneid.domain.verification import VerificationType, VerifyItem
from phoneid.ports import BatchStates, ClientStore, Clock, ConnectProfiles, Mailer, ObjectStore

if TYPE_CHECKING:
    from phoneid.services.verify import Verified

logger = Logger(child=True)

CHUNK_ROWS = 1000
_SUBJECT_NAME_LIMIT = 100

# ``VerifyService.verify_many``: the items, in order, each verified or its error.
VerifyMany = Callable[[Caller, Sequence[VerifyItem]], "list[Verified | PhoneIdError]"]


class ConnectBatches:
    def __init__(
        self,
        objects: ObjectStore,
        states: BatchStates,
        profiles: ConnectProfiles,
        mailer: Mailer,
        clients: ClientStore,
        verify: VerifyMany,
        clock: Clock,
        region: Region,
        chunk_rows: int = CHUNK_ROWS,
        operator_emails: Sequence[str] = (),
    ) -> None:
        if chunk_rows < 1:
            raise ValueError("chunk_rows must be positive")
        self._objects = objects
        self._states = states
        self._profiles = profiles
        self._mailer = mailer
        self._clients = clients
        self._verify = verify
        self._clock = clock
        self._region = region
        self._chunk_rows = chunk_rows
        self._operator_emails = list(operator_emails)

    # --- step 1: validate ------------------------------------------------------------------------

    def validate(
        self, bucket: str, key: str, version_id: str | None = None, etag: str | None = None
    ) -> dict[str, Any]:
        """Claim the uploaded object's batch, check the file and cut its valid rows into chunks.

        Returns ``{"batchId", "outcome": "accepted", "manifestKey", "chunks"}``, ``{"batchId",
        "outcome": "rejected", "reason"}`` or ``{"batchId", "outcome": "duplicate"}``.
        """
        batch_id = batch_id_of(key, version_id or etag)
        place = parse_upload_key(key)
        batch = self._new_batch(batch_id, key)
        client_name, file_name = batch.client_name, batch.file_name
        if not self._states.claim(batch):
            logger.info("connect batch already claimed", extra={"batchId": batch_id})
            return {"batchId": batch_id, "outcome": "duplicate"}
        logger.info(
            "connect batch claimed", extra={"batchId": batch_id, "bucket": bucket, "client": client_name}
        )
        profile: ConnectProfile | None = None
        try:
            if place is None:
                raise FileRejected(Rejection.KEY_NOT_IN_UPLOAD)
            profile = self._profiles.get_by_name(client_name)
            if profile is None:
                raise FileRejected(Rejection.CLIENT_UNKNOWN)
            client = self._clients.get(profile.client_id)
            if client is None or not client.enabled:
                raise FileRejected(Rejection.CLIENT_DISABLED)
            name = parse_file_name(file_name)
            if name is None:
                raise FileRejected(Rejection.FILE_NAME_INVALID)
            if name.client_name != client_name:
                raise FileRejected(Rejection.CLIENT_MISMATCH)
            if name.verification_type.value not in profile.types:
                raise FileRejected(Rejection.TYPE_NOT_ALLOWED)
            batch = replace(
                batch,
                client_id=profile.client_id,
                verification_type=name.verification_type.value,
                file_region=name.region,
            )
            stats, chunks = self._split(batch, version_id, name, profile, client.as_caller())
        except FileRejected as rejected:
            return self._reject(batch, profile, rejected)
        except Exception as error:
            self._abandon(batch, f"validation broke off: {type(error).__name__}")
            raise
        manifest = [{"batchId": batch_id, "chunk": n, "key": chunk_key(batch_id, n)} for n in range(chunks)]
        self._objects.put_text(manifest_key(batch_id), json.dumps(manifest, separators=(",", ":")))
        verifying = replace(
            batch,
            state=BatchState.VERIFYING,
            chunks=chunks,
            counts=stats.counts(),
            updated_at=self._clock.now(),
        )
        if not self._states.update(verifying, BatchState.VALIDATING):
            raise BatchNotFound(f"batch {batch_id} changed state while it was validated")
        logger.info(
            "connect batch accepted",
            extra={"batchId": batch_id, "rows": stats.rows_read, "valid": stats.valid, "chunks": chunks},
        )
        return {
            "batchId": batch_id,
            "outcome": "accepted",
            "manifestKey": manifest_key(batch_id),
            "chunks": chunks,
        }

    def _split(
        self,
        batch: Batch,
        version_id: str | None,
        name: BatchFileName,
        profile: ConnectProfile,
        caller: Caller,
    ) -> tuple[BatchStats, int]:
        """One pass over the file (the version the event named): valid rows into chunk objects,
        invalid ones into errors.jsonl."""
        reader = BatchFileReader(
            self._objects.iter_text(batch.key, version_id),
            file=name,
            enroll_key_hash=profile.enroll_key_hash,
        )
        checks = RowChecks(name.region, self._region, caller.may_use_country)
        stats = BatchStats()
        chunk: list[str] = []
        chunks = 0
        errors = self._objects.open_writer(errors_key(batch.batch_id))
        try:
            for row in reader.rows():
                stats.rows_read += 1
                error = checks.check(row)
                if error is not None:
                    stats.reject(error.value)
                    errors.write(_json_line({**row.to_json(), "code": error.value}))
                    continue
                stats.valid += 1
                chunk.append(_json_line(row.to_json()))
                if len(chunk) == self._chunk_rows:
                    self._objects.put_text(chunk_key(batch.batch_id, chunks), "".join(chunk))
                    chunks, chunk = chunks + 1, []
            if chunk:
                self._objects.put_text(chunk_key(batch.batch_id, chunks), "".join(chunk))
                chunks += 1
        finally:
            errors.close()
        logger.info(
            "connect rows checked",
            extra={
                "batchId": batch.batch_id,
                "duplicateKeys": len(checks.seen),
                "tableBytes": checks.seen.table_bytes,
            },
        )
        return stats, chunks

    def _reject(self, batch: Batch, profile: ConnectProfile | None, rejected: FileRejected) -> dict[str, Any]:
        """The rejected file beside the client's downloads, the batch ``rejected``, the email."""
        if profile is not None:
            self._objects.put_text(
                download_key(profile.client_name, rejected_file_name(batch.file_name)),
                rejected_file(batch.file_name, rejected),
            )
        self._objects.delete_prefix(work_prefix(batch.batch_id))
        done = replace(
            batch, state=BatchState.REJECTED, reason=rejected.reason.value, updated_at=self._clock.now()
        )
        self._states.update(done, BatchState.VALIDATING)
        logger.info(
            "connect batch rejected", extra={"batchId": batch.batch_id, "reason": rejected.reason.value}
        )
        recipients = list(profile.emails) if profile is not None else self._operator_emails
        if recipients:
            self._mailer.send(
                recipients,
                f"PhoneID Connect: {_shown(batch.file_name)} rejected ({rejected.reason.value})",
                _rejected_text(batch, profile, rejected),
            )
        return {"batchId": batch.batch_id, "outcome": "rejected", "reason": rejected.reason.value}

    def _abandon(self, batch: Batch, reason: str) -> None:
        """Validation broke off: the batch ends failed as any failed step ends it (``fail``)."""
        self._end_failed(batch, reason)

    # --- the catch-all: a step failed ------------------------------------------------------------

    def _new_batch(self, batch_id: str, key: str) -> Batch:
        """The record of the upload ``key``'s batch as the step that claims it writes it."""
        place = parse_upload_key(key)
        client_name, file_name = place or ("", key.rsplit("/", 1)[-1])
        now = self._clock.now()
        return Batch(
            batch_id=batch_id,
            key=key,
            file_name=file_name,
            client_name=client_name,
            state=BatchState.VALIDATING,
            created_at=now,
            updated_at=now,
        )

    def fail(
        self,
        key: str,
        version_id: str | None = None,
        etag: str | None = None,
        error: str = "States.TaskFailed",
    ) -> dict[str, Any]:
        """End the batch of the upload ``key`` as ``failed`` after a step failed in any way (its
        error name, as Step Functions reports it: ``Sandbox.Timedout``, ``Runtime.ExitError``,
        ``States.Timeout``...), or its execution timed out or was stopped.

        Idempotent: a batch already in a final state is left as it is and nothing is sent, so the
        state machine may retry this step and the execution-status rule may run it again.
        ``{"batchId", "state", "changed"}``.
        """
        batch_id = batch_id_of(key, version_id or etag)
        batch = self._states.get(batch_id)
        if batch is None:  # the step failed before it could claim the batch: claim it now
            claimed = self._new_batch(batch_id, key)
            batch = claimed if self._states.claim(claimed) else self._states.get(batch_id)
            if batch is None:
                raise BatchNotFound(f"batch {batch_id} could not be claimed nor read")
        if batch.state.final:
            return {"batchId": batch_id, "state": batch.state.value, "changed": False}
        reason = f"the workflow failed while the batch was {batch.state.value}: {_shown(error, 100)}"
        changed = self._end_failed(batch, reason)
        current = self._states.get(batch_id) if not changed else None
        state = BatchState.FAILED if changed else (current.state if current else batch.state)
        return {"batchId": batch_id, "state": state.value, "changed": changed}

    def _end_failed(self, batch: Batch, reason: str) -> bool:
        """The client's ``…_rejected.csv`` (``PROCESSING_FAILED``), then the batch ``failed`` (a
        conditional write from the state it was read in), then — only when this call made it so, so
        at most once — the client's "rejected" email and the operator's alert; the work objects go.
        Each part can be done again: a retry after a failure anywhere finishes the job."""
        profile = self._profiles.get_by_name(batch.client_name) if batch.client_name else None
        rejected = FileRejected(Rejection.PROCESSING_FAILED)
        if profile is not None:
            self._objects.put_text(
                download_key(profile.client_name, rejected_file_name(batch.file_name)),
                rejected_file(batch.file_name, rejected),
            )
        failed = replace(batch, state=BatchState.FAILED, reason=reason, updated_at=self._clock.now())
        changed = self._states.update(failed, batch.state)
        if changed:
            self._tell_operator(failed, reason)
            if profile is not None and profile.emails:
                self._mailer.send(
                    list(profile.emails),
                    f"PhoneID Connect: {_shown(batch.file_name)} rejected ({rejected.reason.value})",
                    _rejected_text(batch, profile, rejected),
                )
        self._objects.delete_prefix(work_prefix(batch.batch_id))
        return changed

    # --- step 2: verify one chunk ----------------------------------------------------------------

    def verify_chunk(self, batch_id: str, chunk: int, key: str) -> dict[str, Any]:
        """Verify every row of one chunk, writing its results object; ``{"chunk", "rows", "passed"}``."""
        batch = self._states.get(batch_id)
        if batch is None or batch.state != BatchState.VERIFYING or batch.verification_type is None:
            raise BatchNotFound(f"batch {batch_id} is not being verified")
        if key != chunk_key(batch_id, chunk) or not 0 <= chunk < batch.chunks:
            raise ValueError(f"chunk {chunk} of batch {batch_id} is not {key!r}")
        results = result_key(batch_id, chunk)
        if self._objects.exists(results):  # a retried task: the results stand as first written
            outcomes = [RowOutcome.from_json(data) for data in _json_lines(self._objects.iter_lines(results))]
            return _chunk_summary(chunk, outcomes)
        rows = [DetailRow.from_json(data) for data in _json_lines(self._objects.iter_lines(key))]
        caller = self._caller(batch)
        verification_type = VerificationType(batch.verification_type)
        outcomes = self._verify_rows(caller, verification_type, rows, chunk)
        self._objects.put_text(results, "".join(_json_line(outcome.to_json()) for outcome in outcomes))
        summary = _chunk_summary(chunk, outcomes)
        logger.info("connect chunk verified", extra={"batchId": batch_id, **summary})
        return summary

    def _caller(self, batch: Batch) -> Caller | None:
        client = self._clients.get(batch.client_id or "")
        return client.as_caller() if client is not None and client.enabled else None

    def _verify_rows(
        self, caller: Caller | None, verification_type: VerificationType, rows: list[DetailRow], chunk: int
    ) -> list[RowOutcome]:
        if caller is None:
            refused = Unauthorized("Unauthorized: the client's credentials are disabled or removed")
            return [error_outcome(row, str(refused.code), refused.message) for row in rows]
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
        return [self._row_outcome(row, outcome, chunk) for row, outcome in zip(rows, verified, strict=True)]

    @staticmethod
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

    # --- step 3: deliver -------------------------------------------------------------------------

    def deliver(self, batch_id: str) -> dict[str, Any]:
        """Merge the results into the output file and the row errors into the error file, check the
        count, email, clean up. ``{"batchId", "state", "output", "errors", "stats"}``."""
        batch = self._states.get(batch_id)
        if batch is None:
            raise BatchNotFound(f"batch {batch_id} has no record")
        if batch.state in (BatchState.DELIVERED, BatchState.FAILED):
            return _delivered(batch)
        if batch.state != BatchState.VERIFYING or batch.verification_type is None:
            raise BatchNotFound(f"batch {batch_id} is {batch.state.value}, not verifying")
        stats = BatchStats.from_counts(batch.counts, started_at=batch.created_at)
        missing = [n for n in range(batch.chunks) if not self._objects.exists(result_key(batch_id, n))]
        output_rows = self._write_output(batch, stats, set(missing))
        error_rows = self._write_errors(batch, stats, missing)
        stats.finished_at = self._clock.now()
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
        if not self._states.update(done, BatchState.VERIFYING):  # another delivery finished first
            current = self._states.get(batch_id)
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
            self._tell_operator(done, reason)
        if not balanced:
            raise BatchCountMismatch(f"batch {batch_id}: {reason}")
        profile = self._profiles.get_by_name(batch.client_name)
        if profile is not None and profile.emails:
            subject = f"PhoneID Connect: {_shown(batch.file_name)} processed"
            if stats.processing_failed:
                subject += f", {stats.processing_failed} rows not processed"
            self._mailer.send(list(profile.emails), subject, _processed_text(batch, stats))
        self._objects.delete_prefix(work_prefix(batch_id))
        return _delivered(done)

    def _write_output(self, batch: Batch, stats: BatchStats, missing: set[int]) -> int:
        lines = CsvLines()
        sink = self._objects.open_writer(download_key(batch.client_name, output_file_name(batch.file_name)))
        count = 0
        try:
            sink.write(lines.line(header_record()))
            for n in range(batch.chunks):
                if n in missing:
                    continue
                for data in _json_lines(self._objects.iter_lines(result_key(batch.batch_id, n))):
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
        sink = self._objects.open_writer(download_key(batch.client_name, errors_file_name(batch.file_name)))
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
        if not self._objects.exists(key):
            return
        for data in _json_lines(self._objects.iter_lines(key)):
            yield str(data["code"]), DetailRow.from_json(data)

    def _unprocessed_rows(self, batch_id: str, missing: list[int]) -> Iterator[tuple[str, DetailRow]]:
        """The rows of the chunks without results, in input order (chunks are in input order)."""
        return chain.from_iterable(self._chunk_rows_failed(batch_id, n) for n in missing)

    def _chunk_rows_failed(self, batch_id: str, chunk: int) -> Iterator[tuple[str, DetailRow]]:
        key = chunk_key(batch_id, chunk)
        if not self._objects.exists(key):  # the rows are gone: the count check says so
            return
        for data in _json_lines(self._objects.iter_lines(key)):
            yield PROCESSING_FAILED_CODE, DetailRow.from_json(data)

    def _tell_operator(self, batch: Batch, reason: str) -> None:
        logger.error("connect batch failed", extra={"batchId": batch.batch_id, "reason": reason})
        if not self._operator_emails:
            return
        self._mailer.send(
            self._operator_emails,
            f"PhoneID Connect: batch {batch.batch_id} failed ({_shown(batch.file_name)})",
            "\n".join(
                [
                    f"Batch: {batch.batch_id}",
                    f"Client: {batch.client_name or '-'} ({batch.client_id or 'no client id'})",
                    f"Object: {_shown(batch.key, 300)}",
                    f"State: {batch.state.value}",
                    f"Reason: {reason}",
                    "",
                    BatchStats.from_counts(batch.counts, batch.created_at, batch.updated_at).text(),
                ]
            ),
        )


# --- helpers --------------------------------------------------------------------------------------


def _json_line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def _json_lines(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.strip():
            data = json.loads(line)
            if isinstance(data, dict):
                yield data


def _chunk_summary(chunk: int, outcomes: Sequence[RowOutcome]) -> dict[str, Any]:
    return {"chunk": chunk, "rows": len(outcomes), "passed": sum(1 for o in outcomes if o.passed)}


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


def _delivered(batch: Batch) -> dict[str, Any]:
    return {
        "batchId": batch.batch_id,
        "state": batch.state.value,
        "output": download_key(batch.client_name, output_file_name(batch.file_name)),
        "errors": download_key(batch.client_name, errors_file_name(batch.file_name)),
        "stats": BatchStats.from_counts(batch.counts, batch.created_at, batch.updated_at).to_json(),
    }


def _shown(text: str, limit: int = _SUBJECT_NAME_LIMIT) -> str:
    """A name fit for a subject line: printable characters only, shortened."""
    printable = "".join(c if c.isprintable() else "?" for c in text)
    return printable if len(printable) <= limit else printable[: limit - 1] + "…"


def _rejected_text(batch: Batch, profile: ConnectProfile | None, rejected: FileRejected) -> str:
    shown = _shown(batch.file_name, 300)
    first = f"The Connect file {shown} was rejected; none of its rows were processed."
    if rejected.reason == Rejection.PROCESSING_FAILED:
        first = f"The Connect file {shown} could not be processed; no results were delivered."
    lines = [
        first,
        "",
        f"Reason code: {rejected.reason.value}",
        f"Reason: {rejected.message}",
    ]
    if profile is not None:
        lines += [
            "",
            f"The same explanation is in /download/{_shown(rejected_file_name(batch.file_name), 300)}.",
            "Correct the file and upload it again.",
        ]
    else:
        lines += ["", f"Object: {_shown(batch.key, 300)}", "No onboarded Connect client owns this directory."]
    lines += ["", f"Batch: {batch.batch_id}"]
    return "\n".join(lines)


def _processed_text(batch: Batch, stats: BatchStats) -> str:
    lines = [
        f"The Connect file {_shown(batch.file_name, 300)} has been processed.",
        "",
        f"Output file: /download/{output_file_name(batch.file_name)}",
        f"Error file: /download/{errors_file_name(batch.file_name)}",
        "",
        stats.text(),
    ]
    if stats.processing_failed:
        lines += [
            "",
            f"{stats.processing_failed} rows could not be processed and are in the error file as "
            f"{PROCESSING_FAILED_CODE}; upload them again in a new file.",
        ]
    lines += ["", f"Batch: {batch.batch_id}"]
    return "\n".join(lines)
