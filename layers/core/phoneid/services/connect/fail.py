"""Connect workflow, the catch-all (EndFailed): a step failed in any way, or the execution timed out
or was stopped; the upload's batch ends ``failed``.

Idempotent: a batch already in a final state is left as it is and nothing is sent, so the state
machine may retry this step and the execution-status rule may run it again. Validate ends a batch
the same way when it breaks off (``end``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from phoneid.api.connect_steps import Ended
from phoneid.domain.connect.batch import Batch, BatchState
from phoneid.domain.connect.errors import BatchNotFound
from phoneid.domain.connect.names import batch_id_of, download_key, rejected_file_name, work_prefix
from phoneid.domain.connect.rejection import FileRejected, Rejection
from phoneid.domain.connect.writer import rejected_file
from phoneid.ports import BatchStates, Clock, ConnectProfiles, ObjectStore
from phoneid.services.connect.emails import ConnectEmails, shown


@dataclass(frozen=True)
class FailStep:
    objects: ObjectStore
    states: BatchStates
    profiles: ConnectProfiles
    emails: ConnectEmails
    clock: Clock

    def run(
        self,
        key: str,
        version_id: str | None = None,
        etag: str | None = None,
        error: str = "States.TaskFailed",
    ) -> Ended:
        """End the batch of the upload ``key`` as ``failed`` after a step failed in any way (its
        error name, as Step Functions reports it: ``Sandbox.Timedout``, ``Runtime.ExitError``,
        ``States.Timeout``...), or its execution timed out or was stopped."""
        batch_id = batch_id_of(key, version_id or etag)
        batch = self.states.get(batch_id)
        if batch is None:  # the step failed before it could claim the batch: claim it now
            claimed = Batch.claimed(batch_id, key, self.clock.now())
            batch = claimed if self.states.claim(claimed) else self.states.get(batch_id)
            if batch is None:
                raise BatchNotFound(f"batch {batch_id} could not be claimed nor read")
        if batch.state.final:
            return Ended(batch_id, batch.state, changed=False)
        reason = f"the workflow failed while the batch was {batch.state.value}: {shown(error, 100)}"
        changed = self.end(batch, reason)
        current = self.states.get(batch_id) if not changed else None
        state = BatchState.FAILED if changed else (current.state if current else batch.state)
        return Ended(batch_id, state, changed)

    def end(self, batch: Batch, reason: str) -> bool:
        """The client's ``…_rejected.csv`` (``PROCESSING_FAILED``), then the batch ``failed`` (a
        conditional write from the state it was read in), then — only when this call made it so, so
        at most once — the client's "rejected" email and the operator's alert; the work objects go.
        Each part can be done again: a retry after a failure anywhere finishes the job."""
        profile = self.profiles.get_by_name(batch.client_name) if batch.client_name else None
        rejected = FileRejected(Rejection.PROCESSING_FAILED)
        if profile is not None:
            self.objects.put_text(
                download_key(profile.client_name, rejected_file_name(batch.file_name)),
                rejected_file(batch.file_name, rejected),
            )
        failed = replace(batch, state=BatchState.FAILED, reason=reason, updated_at=self.clock.now())
        changed = self.states.update(failed, batch.state)
        if changed:
            self.emails.batch_failed(failed, reason)
            if profile is not None:
                self.emails.rejected(batch, profile, rejected)
        self.objects.delete_prefix(work_prefix(batch.batch_id))
        return changed
