"""Connect's row accounting: what a batch counts, stores flat on its record, reads back and reports
(the deliver step's JSON and the "processed" email). Every row read is counted once somewhere."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from phoneid.domain.connect.stats import DUPLICATE_CODE, PROCESSING_FAILED_CODE, BatchStats

STARTED = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def counted() -> BatchStats:
    """A batch of 20 rows: 4 rejected (2 duplicates), 16 valid of which 9 passed, 4 did not, 2 had
    an error and 1 was never processed."""
    stats = BatchStats(rows_read=20, valid=16, verified=9, not_verified=4, enrolled=7, processing_failed=1)
    for code in (DUPLICATE_CODE, DUPLICATE_CODE, "ERR_MISSING_PHONE", "ERR_INVALID_PHONE"):
        stats.reject(code)
    stats.failed_by_reason.update({"9003": 3, "9111": 1})
    stats.errors_by_code.update({"8001": 1, "8010": 1})
    return stats


def test_rejections_are_counted_by_code_and_duplicates_among_them() -> None:
    stats = counted()
    assert stats.rejected_by_code == {DUPLICATE_CODE: 2, "ERR_MISSING_PHONE": 1, "ERR_INVALID_PHONE": 1}
    assert (stats.rejected, stats.duplicates, stats.verify_errors) == (4, 2, 2)


def test_every_row_read_is_accounted_for_once() -> None:
    stats = counted()
    assert stats.rows_read == stats.valid + stats.rejected
    assert stats.valid == stats.verified + stats.not_verified + stats.verify_errors + stats.processing_failed


def test_a_batch_with_nothing_counted_counts_zero() -> None:
    stats = BatchStats()
    assert (stats.rejected, stats.duplicates, stats.verify_errors, stats.processing_seconds) == (
        0,
        0,
        0,
        None,
    )
    assert BatchStats.from_counts({}) == stats


def test_the_flat_counts_are_what_the_record_stores_and_read_back_whole() -> None:
    stats = counted()
    flat = stats.counts()
    assert flat == {
        "rowsRead": 20,
        "valid": 16,
        "verified": 9,
        "notVerified": 4,
        "enrolled": 7,
        "processingFailed": 1,
        f"rejected:{DUPLICATE_CODE}": 2,
        "rejected:ERR_MISSING_PHONE": 1,
        "rejected:ERR_INVALID_PHONE": 1,
        "reason:9003": 3,
        "reason:9111": 1,
        "error:8001": 1,
        "error:8010": 1,
    }
    assert BatchStats.from_counts(flat) == stats


def test_the_deliver_steps_json_reports_each_count() -> None:
    stats = counted()
    stats.started_at, stats.finished_at = STARTED, STARTED + timedelta(seconds=75, milliseconds=1234)
    assert stats.to_json() == {
        "rowsRead": 20,
        "valid": 16,
        "rejected": 4,
        "rejectedByCode": {DUPLICATE_CODE: 2, "ERR_INVALID_PHONE": 1, "ERR_MISSING_PHONE": 1},
        "duplicates": 2,
        "verified": 9,
        "notVerified": 4,
        "enrolled": 7,
        "failedByReason": {"9003": 3, "9111": 1},
        "errorsByCode": {"8001": 1, "8010": 1},
        "processingFailed": 1,
        "processingSeconds": 76.234,
    }


def test_the_email_lists_the_counts() -> None:
    stats = counted()
    stats.started_at, stats.finished_at = STARTED, STARTED + timedelta(hours=1, minutes=2, seconds=3)
    text = stats.text()
    for line in (
        "Rows read: 20",
        "Valid rows: 16",
        "Rejected rows: 4",
        f"  {DUPLICATE_CODE}: 2",
        "Duplicates: 2",
        "Verified (passed): 9",
        "Not verified: 4",
        "Enrolled: 7",
        "Rows with a verification error: 2",
        "  8010: 1",
        f"Rows not processed ({PROCESSING_FAILED_CODE}): 1",
        "Processing time: 1 h 2 min 3 s",
    ):
        assert line in text.splitlines(), line
    reasons = [line for line in text.splitlines() if line.startswith("  9")]
    assert [line.split()[0] for line in reasons] == ["9003", "9111"]  # most frequent first
    assert reasons[0].endswith(": 3")


def test_the_processing_time_reads_in_minutes_and_seconds() -> None:
    short = BatchStats(started_at=STARTED, finished_at=STARTED + timedelta(seconds=12, milliseconds=340))
    minutes = BatchStats(started_at=STARTED, finished_at=STARTED + timedelta(minutes=2, seconds=5))
    assert "Processing time: 12.3 s" in short.text()
    assert "Processing time: 2 min 5 s" in minutes.text()
    assert "Failed by reason code: none" in short.text()
    assert "Processing time" not in BatchStats().text()


def test_a_batch_started_and_not_finished_has_no_processing_time_yet() -> None:
    assert BatchStats(started_at=STARTED).processing_seconds is None
    assert BatchStats(finished_at=STARTED).processing_seconds is None
    assert "Processing time" not in BatchStats(started_at=STARTED).text()


def test_the_emails_reasons_go_most_frequent_first_then_by_code() -> None:
    stats = BatchStats()
    stats.failed_by_reason.update({"9111": 2, "9003": 1, "9100": 3, "9004": 2})
    lines = [line.split()[0] for line in stats.text().splitlines() if line.startswith("  9")]
    assert lines == ["9100", "9004", "9111", "9003"]


def test_the_processing_time_is_kept_to_the_millisecond() -> None:
    stats = BatchStats(started_at=STARTED, finished_at=STARTED + timedelta(seconds=1, microseconds=123456))
    assert stats.processing_seconds == 1.123
