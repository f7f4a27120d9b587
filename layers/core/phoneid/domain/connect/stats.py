"""A batch's data-quality statistics: counted by the steps, stored flat on the batch record, shown
in the "processed" email and by ``phoneid connect status``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from phoneid.domain.reasons import describe


@dataclass
class BatchStats:
    """The data-quality statistics of one batch, as the "processed" email and ``connect status`` show.

    ``rejected_by_code``: detail rows the row checks refused (duplicates included), by code.
    ``verified``: rows that passed; ``not_verified``: rows verified that did not pass, whose
    evaluation codes ``failed_by_reason`` counts (a row counts once under each of its codes);
    ``errors_by_code``: rows the verification could not run for (API error codes, 8001, 8010, ...);
    ``processing_failed``: rows of a chunk that never produced results (``ERR_PROCESSING_FAILED``).
    """

    rows_read: int = 0
    valid: int = 0
    rejected_by_code: dict[str, int] = field(default_factory=dict)
    verified: int = 0
    not_verified: int = 0
    enrolled: int = 0
    failed_by_reason: dict[str, int] = field(default_factory=dict)
    errors_by_code: dict[str, int] = field(default_factory=dict)
    processing_failed: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def rejected(self) -> int:
        return sum(self.rejected_by_code.values())

    @property
    def duplicates(self) -> int:
        return self.rejected_by_code.get(DUPLICATE_CODE, 0)

    @property
    def verify_errors(self) -> int:
        return sum(self.errors_by_code.values())

    @property
    def processing_seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return round((self.finished_at - self.started_at).total_seconds(), 3)

    def reject(self, code: str) -> None:
        self.rejected_by_code[code] = self.rejected_by_code.get(code, 0) + 1

    def counts(self) -> dict[str, int]:
        """A flat map of numbers (what the batch record stores)."""
        flat = {
            "rowsRead": self.rows_read,
            "valid": self.valid,
            "verified": self.verified,
            "notVerified": self.not_verified,
            "enrolled": self.enrolled,
            "processingFailed": self.processing_failed,
        }
        for prefix, counted in (
            ("rejected:", self.rejected_by_code),
            ("reason:", self.failed_by_reason),
            ("error:", self.errors_by_code),
        ):
            flat.update({prefix + code: n for code, n in counted.items()})
        return flat

    @classmethod
    def from_counts(
        cls,
        counts: Mapping[str, int],
        started_at: datetime | None = None,
        finished_at: datetime | None = None,
    ) -> BatchStats:
        def prefixed(prefix: str) -> dict[str, int]:
            return {k.removeprefix(prefix): int(v) for k, v in counts.items() if k.startswith(prefix)}

        return cls(
            rows_read=int(counts.get("rowsRead", 0)),
            valid=int(counts.get("valid", 0)),
            rejected_by_code=prefixed("rejected:"),
            verified=int(counts.get("verified", 0)),
            not_verified=int(counts.get("notVerified", 0)),
            enrolled=int(counts.get("enrolled", 0)),
            failed_by_reason=prefixed("reason:"),
            errors_by_code=prefixed("error:"),
            processing_failed=int(counts.get("processingFailed", 0)),
            started_at=started_at,
            finished_at=finished_at,
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON the deliver step returns."""
        return {
            "rowsRead": self.rows_read,
            "valid": self.valid,
            "rejected": self.rejected,
            "rejectedByCode": dict(sorted(self.rejected_by_code.items())),
            "duplicates": self.duplicates,
            "verified": self.verified,
            "notVerified": self.not_verified,
            "enrolled": self.enrolled,
            "failedByReason": dict(sorted(self.failed_by_reason.items())),
            "errorsByCode": dict(sorted(self.errors_by_code.items())),
            "processingFailed": self.processing_failed,
            "processingSeconds": self.processing_seconds,
        }

    def text(self) -> str:
        """The statistics as the "processed" email lists them (counts only: no row data, no PII)."""
        lines = [
            f"Rows read: {self.rows_read}",
            f"Valid rows: {self.valid}",
            f"Rejected rows: {self.rejected}",
            *(f"  {code}: {n}" for code, n in sorted(self.rejected_by_code.items())),
            f"Duplicates: {self.duplicates}",
            f"Verified (passed): {self.verified}",
            f"Not verified: {self.not_verified}",
            f"Enrolled: {self.enrolled}",
            "Failed by reason code:" + ("" if self.failed_by_reason else " none"),
            *(
                f"  {code} {_describe(code)}: {n}"
                for code, n in sorted(self.failed_by_reason.items(), key=lambda pair: (-pair[1], pair[0]))
            ),
            f"Rows with a verification error: {self.verify_errors}",
            *(f"  {code}: {n}" for code, n in sorted(self.errors_by_code.items())),
            f"Rows not processed ({PROCESSING_FAILED_CODE}): {self.processing_failed}",
        ]
        seconds = self.processing_seconds
        if seconds is not None:
            lines.append(f"Processing time: {_duration(seconds)}")
        return "\n".join(lines)


DUPLICATE_CODE = "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"
PROCESSING_FAILED_CODE = "ERR_PROCESSING_FAILED"


def _describe(code: str) -> str:
    try:
        return f"({describe(int(code))})"
    except (KeyError, ValueError):
        return ""


def _duration(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min {secs} s"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{seconds:.1f} s"
