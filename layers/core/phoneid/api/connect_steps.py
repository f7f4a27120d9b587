"""The Connect workflow's contract with its state machine (``statemachines/connect.asl.json``): what
each step's function is given, read into a typed input by its handler, and what each step returns,
typed here and serialised by its handler (the state machine selects ``$.validated.batch.outcome``,
``.manifestKey`` and ``.batchId`` of Validate's). The JSON names are the contract; keys of an input a
step does not use are ignored (Step Functions adds its own). Like the HTTP models beside it, this
module loads no service: a handler imports it and builds its step on first use."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from phoneid.domain.connect.batch import BatchState
from phoneid.domain.connect.stats import BatchStats

# === What each step is given ========================================================================


class _StepInput(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


def _absent_if_empty(value: object) -> object:
    return value or None


# S3's events and the execution's input give "" for a missing version or ETag.
AbsentIfEmpty = Annotated[str | None, BeforeValidator(_absent_if_empty)]


class UploadedObject(_StepInput):
    """Validate's input, the execution's: the object the S3 Object Created event named."""

    bucket: str
    key: str
    version_id: AbsentIfEmpty = Field(default=None, alias="versionId")
    etag: AbsentIfEmpty = None


class ChunkTask(_StepInput):
    """Verify's input: one item of the manifest Validate wrote."""

    batch_id: str = Field(alias="batchId")
    chunk: int
    key: str


class BatchTask(_StepInput):
    """Deliver's input: the batch Validate accepted."""

    batch_id: str = Field(alias="batchId")


class _Failure(_StepInput):
    error: str | None = Field(default=None, alias="Error")


class _FailedTask(_StepInput):
    """The catch-all's input from the state machine: the execution's input and the error caught. A
    chunk's child execution has no upload, so every part may be missing."""

    key: AbsentIfEmpty = None
    version_id: AbsentIfEmpty = Field(default=None, alias="versionId")
    etag: AbsentIfEmpty = None
    failure: _Failure | None = None


class _ExecutionEnded(_StepInput):
    """The ``detail`` of EventBridge's "Step Functions Execution Status Change" event."""

    input: str | None = None
    error: str | None = None
    status: str


class FailedUpload(_StepInput):
    """EndFailed's input: the upload whose batch ends (``key`` None: not an upload's execution) and
    the error, as Step Functions names it."""

    key: str | None
    version_id: str | None
    etag: str | None
    error: str

    @classmethod
    def of(cls, event: Mapping[str, Any]) -> FailedUpload:
        """From either event: a task of the state machine (a step failed), or the EventBridge rule
        on an execution that failed, timed out or was stopped."""
        detail = event.get("detail")
        if isinstance(detail, Mapping):
            ended = _ExecutionEnded.model_validate(detail)
            upload = _FailedTask.model_validate(json.loads(ended.input or "{}"))
            error = ended.error or f"execution {ended.status}"
        else:
            upload = _FailedTask.model_validate(event)
            error = (upload.failure.error if upload.failure else None) or "States.TaskFailed"
        return cls(key=upload.key, version_id=upload.version_id, etag=upload.etag, error=error)


# === What each step returns =========================================================================


# --- Validate ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Accepted:
    """The file passed the authorization checks; its valid rows are in ``chunks`` chunk objects."""

    batch_id: str
    manifest_key: str
    chunks: int
    outcome: ClassVar[Literal["accepted"]] = "accepted"

    def to_json(self) -> dict[str, Any]:
        return {
            "batchId": self.batch_id,
            "outcome": self.outcome,
            "manifestKey": self.manifest_key,
            "chunks": self.chunks,
        }


@dataclass(frozen=True)
class Rejected:
    """The file failed an authorization check (``reason``: its ``Rejection`` code)."""

    batch_id: str
    reason: str
    outcome: ClassVar[Literal["rejected"]] = "rejected"

    def to_json(self) -> dict[str, Any]:
        return {"batchId": self.batch_id, "outcome": self.outcome, "reason": self.reason}


@dataclass(frozen=True)
class Duplicate:
    """The object version's batch was claimed before: a redelivered event, nothing written."""

    batch_id: str
    outcome: ClassVar[Literal["duplicate"]] = "duplicate"

    def to_json(self) -> dict[str, Any]:
        return {"batchId": self.batch_id, "outcome": self.outcome}


Validated = Accepted | Rejected | Duplicate


# --- Verify chunk -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkVerified:
    """One chunk's rows verified, and how many passed."""

    chunk: int
    rows: int
    passed: int

    def to_json(self) -> dict[str, Any]:
        return {"chunk": self.chunk, "rows": self.rows, "passed": self.passed}


# --- Deliver ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Delivered:
    """The batch's final state, where its output and error files are, and its statistics."""

    batch_id: str
    state: BatchState
    output: str
    errors: str
    stats: BatchStats

    def to_json(self) -> dict[str, Any]:
        return {
            "batchId": self.batch_id,
            "state": self.state.value,
            "output": self.output,
            "errors": self.errors,
            "stats": self.stats.to_json(),
        }


# --- EndFailed --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ended:
    """The batch's state after the catch-all, and whether this call ended it (``changed``)."""

    batch_id: str
    state: BatchState
    changed: bool

    def to_json(self) -> dict[str, Any]:
        return {"batchId": self.batch_id, "state": self.state.value, "changed": self.changed}


@dataclass(frozen=True)
class NotAnUpload:
    """The catch-all ran for an execution that had no upload (a chunk's child execution): nothing ended."""

    def to_json(self) -> dict[str, Any]:
        return {"batchId": None, "state": None, "changed": False}
