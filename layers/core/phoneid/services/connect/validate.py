"""Connect workflow, step 1 (Validate): claim the uploaded object's batch, run the authorization
checks while reading the file as a stream, check every row, and cut the valid rows into chunk
objects of ``chunk_rows`` rows listed in a manifest; the invalid rows go to ``errors.jsonl``.

What stays in memory is one chunk and the duplicate-key table (``SeenKeys``: 32 MiB for 800,000 rows
with Client Customer IDs). The claim (a conditional put keyed by the object version's batch id) comes
before anything else: a second call for the same object version returns ``Duplicate`` having written
nothing.
"""

from __future__ import annotations

import json
from dataclasses import replace

from aws_lambda_powertools import Logger

from phoneid.api.connect_steps import Accepted, Duplicate, Rejected, Validated
from phoneid.domain.clients import Caller
from phoneid.domain.connect.batch import Batch, BatchState
from phoneid.domain.connect.errors import BatchNotFound
from phoneid.domain.connect.names import (
    BatchFileName,
    batch_id_of,
    chunk_key,
    download_key,
    errors_key,
    manifest_key,
    parse_file_name,
    parse_upload_key,
    rejected_file_name,
    work_prefix,
)
from phoneid.domain.connect.profile import ConnectProfile
from phoneid.domain.connect.reader import BatchFileReader
from phoneid.domain.connect.rejection import FileRejected, Rejection
from phoneid.domain.connect.rows import RowChecks
from phoneid.domain.connect.stats import BatchStats
from phoneid.domain.connect.writer import rejected_file
from phoneid.domain.phone import Region
from phoneid.ports import BatchStates, ClientStore, Clock, ConnectProfiles, ObjectStore
from phoneid.services.connect.emails import ConnectEmails
from phoneid.services.connect.fail import FailStep
from phoneid.services.connect.work_objects import json_line

logger = Logger(child=True)

CHUNK_ROWS = 1000


class ValidateStep:
    def __init__(
        self,
        objects: ObjectStore,
        states: BatchStates,
        profiles: ConnectProfiles,
        clients: ClientStore,
        emails: ConnectEmails,
        failing: FailStep,
        clock: Clock,
        region: Region,
        chunk_rows: int = CHUNK_ROWS,
    ) -> None:
        if chunk_rows < 1:
            raise ValueError("chunk_rows must be positive")
        self._objects = objects
        self._states = states
        self._profiles = profiles
        self._clients = clients
        self._emails = emails
        self._failing = failing
        self._clock = clock
        self._region = region
        self._chunk_rows = chunk_rows

    def run(self, bucket: str, key: str, version_id: str | None = None, etag: str | None = None) -> Validated:
        """Claim the uploaded object's batch, check the file and cut its valid rows into chunks."""
        batch_id = batch_id_of(key, version_id or etag)
        place = parse_upload_key(key)
        batch = Batch.claimed(batch_id, key, self._clock.now())
        client_name, file_name = batch.client_name, batch.file_name
        if not self._states.claim(batch):
            logger.info("connect batch already claimed", extra={"batchId": batch_id})
            return Duplicate(batch_id)
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
        except Exception as error:  # the batch ends failed as any failed step ends it
            self._failing.end(batch, f"validation broke off: {type(error).__name__}")
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
        return Accepted(batch_id, manifest_key(batch_id), chunks)

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
                    errors.write(json_line({**row.to_json(), "code": error.value}))
                    continue
                stats.valid += 1
                chunk.append(json_line(row.to_json()))
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

    def _reject(self, batch: Batch, profile: ConnectProfile | None, rejected: FileRejected) -> Rejected:
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
        self._emails.rejected(batch, profile, rejected)
        return Rejected(batch.batch_id, rejected.reason.value)
