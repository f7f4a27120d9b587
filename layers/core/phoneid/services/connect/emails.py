"""The Connect workflow's emails: their subjects and bodies, and who gets them.

The sender is the mailer's (the SES adapter's configured address: template parameter
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
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_lambda_powertools import Logger

from phoneid.domain.connect.batch import Batch
from phoneid.domain.connect.names import errors_file_name, output_file_name, rejected_file_name
from phoneid.domain.connect.profile import ConnectProfile
from phoneid.domain.connect.rejection import FileRejected, Rejection
from phoneid.domain.connect.stats import PROCESSING_FAILED_CODE, BatchStats
from phoneid.ports import Mailer

logger = Logger(child=True)

_SUBJECT_NAME_LIMIT = 100


class ConnectEmails:
    def __init__(self, mailer: Mailer, operator_emails: Sequence[str] = ()) -> None:
        self._mailer = mailer
        self._operator_emails = list(operator_emails)

    def rejected(self, batch: Batch, profile: ConnectProfile | None, rejected: FileRejected) -> None:
        """To the client's addresses; without a client (an unknown directory), to the operator's."""
        recipients = list(profile.emails) if profile is not None else self._operator_emails
        if recipients:
            self._mailer.send(
                recipients,
                f"PhoneID Connect: {shown(batch.file_name)} rejected ({rejected.reason.value})",
                _rejected_text(batch, profile, rejected),
            )

    def processed(self, batch: Batch, profile: ConnectProfile | None, stats: BatchStats) -> None:
        if profile is None or not profile.emails:
            return
        subject = f"PhoneID Connect: {shown(batch.file_name)} processed"
        if stats.processing_failed:
            subject += f", {stats.processing_failed} rows not processed"
        self._mailer.send(list(profile.emails), subject, _processed_text(batch, stats))

    def batch_failed(self, batch: Batch, reason: str) -> None:
        """The operator's alert (and the error log line it goes with)."""
        logger.error("connect batch failed", extra={"batchId": batch.batch_id, "reason": reason})
        if not self._operator_emails:
            return
        self._mailer.send(
            self._operator_emails,
            f"PhoneID Connect: batch {batch.batch_id} failed ({shown(batch.file_name)})",
            "\n".join(
                [
                    f"Batch: {batch.batch_id}",
                    f"Client: {batch.client_name or '-'} ({batch.client_id or 'no client id'})",
                    f"Object: {shown(batch.key, 300)}",
                    f"State: {batch.state.value}",
                    f"Reason: {reason}",
                    "",
                    BatchStats.from_counts(batch.counts, batch.created_at, batch.updated_at).text(),
                ]
            ),
        )


def shown(text: str, limit: int = _SUBJECT_NAME_LIMIT) -> str:
    """A name fit for a subject line: printable characters only, shortened."""
    printable = "".join(c if c.isprintable() else "?" for c in text)
    return printable if len(printable) <= limit else printable[: limit - 1] + "…"


def _rejected_text(batch: Batch, profile: ConnectProfile | None, rejected: FileRejected) -> str:
    name = shown(batch.file_name, 300)
    first = f"The Connect file {name} was rejected; none of its rows were processed."
    if rejected.reason == Rejection.PROCESSING_FAILED:
        first = f"The Connect file {name} could not be processed; no results were delivered."
    lines = [
        first,
        "",
        f"Reason code: {rejected.reason.value}",
        f"Reason: {rejected.message}",
    ]
    if profile is not None:
        lines += [
            "",
            f"The same explanation is in /download/{shown(rejected_file_name(batch.file_name), 300)}.",
            "Correct the file and upload it again.",
        ]
    else:
        lines += ["", f"Object: {shown(batch.key, 300)}", "No onboarded Connect client owns this directory."]
    lines += ["", f"Batch: {batch.batch_id}"]
    return "\n".join(lines)


def _processed_text(batch: Batch, stats: BatchStats) -> str:
    lines = [
        f"The Connect file {shown(batch.file_name, 300)} has been processed.",
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
