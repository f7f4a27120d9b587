"""What each workflow step returns: typed here, serialised by its handler into the JSON the state
machine reads (``statemachines/connect.asl.json`` selects ``$.validated.batch.outcome``,
``.manifestKey`` and ``.batchId`` of Validate's). The JSON names are the state machine's contract."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from phoneid.domain.connect.batch import BatchState
from phoneid.domain.connect.stats import BatchStats

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
