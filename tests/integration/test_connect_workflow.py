"""The Connect workflow on moto, as in AWS: a file put under a client's upload prefix is an S3 Object
Created event; the template's EventBridge rule starts ConnectStateMachine (statemachines/
connect.asl.json, run by moto's interpreter; its Lambda tasks run by the template's handlers); the
results appear under the client's download prefix and the emails in SES.

What a client sees is asserted: the files, their rows, the emails, the batch record. Retry waits are
instant here (``retry_waits.retry_delay_scale``); the Retry policy itself is the definition's.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from phoneid import bootstrap
from phoneid.adapters.aws import internal_error
from phoneid.adapters.s3 import S3ObjectStore
from phoneid.domain.clients import Caller
from phoneid.domain.connect import BatchState, ConnectProfile
from phoneid.domain.connect.writer import OUTPUT_COLUMNS
from phoneid.domain.credentials import hash_secret
from phoneid.domain.errors import PhoneIdError
from phoneid.domain.verification import VerifyItem
from phoneid.services.connect import ConnectBatches
from phoneid.services.verify import Verified
from phoneid_dev import workflows
from phoneid_dev.console_page.panels import batch_row
from phoneid_dev.events import function_context
from phoneid_dev.outbox import sent_emails
from phoneid_dev.workflows import retry_waits
from tests.harness import Api, Credentials

ENROLL_KEY = "acme-enroll-key-5d1e"
FILE = "acme_US_verifiedUser_20260301120000.csv"
STEM = FILE.removesuffix(".csv")
OPS = "ops@acme.example"
SENDER = "connect@phoneid.invalid"  # the template's default ConnectEmailSender

LENA = "+12025550112"  # Lena Ortiz: Verified User passes (docs/sandbox.md)
HUGO = "+13035550114"  # Hugo Code9014: does not pass under another person's name
NOBODY = "+12025550199"  # not a Sandbox test user: 8007


def connect_batches(container: bootstrap.Container, **changes: Any) -> ConnectBatches:
    """Connect's service wired as the container wires it, with ``changes`` (a verify, a chunk size,
    the operator's addresses)."""
    wiring: dict[str, Any] = {
        "objects": container.objects,
        "states": container.batch_states,
        "profiles": container.connect_profiles,
        "mailer": container.mailer,
        "clients": container.clients,
        "verify": container.verify.verify_many,
        "decisions": container.decision_log,
        "clock": container.clock,
        "region": container.settings.region,
        "operator_emails": container.settings.operator_emails,
    }
    return ConnectBatches(**(wiring | changes))


@dataclass
class Connect:
    api: Api
    client_id: str = ""
    credentials: Credentials | None = None

    @property
    def bucket(self) -> str:
        return self.api.stack.physical_ids["ConnectBucket"]

    @property
    def state_machine(self) -> str:
        return self.api.stack.physical_ids["ConnectStateMachine"]

    def onboard(self, name: str = "acme", types: tuple[str, ...] = ("verifiedUser",)) -> str:
        """What ``phoneid connect onboard`` stores: a client, and its Connect profile."""
        self.credentials = self.api.create_client(name=name)
        self.client_id = self.credentials.client_id
        self.api.container.connect_profiles.put(
            ConnectProfile(
                client_id=self.client_id,
                client_name=name,
                types=frozenset(types),
                enroll_key_hash=hash_secret(ENROLL_KEY),
                emails=(OPS,),
            )
        )
        return self.client_id

    def upload(self, text: str, file: str = FILE, client: str = "acme", place: str = "upload") -> str:
        """What the SFTP server does with ``put file``; the object's key."""
        key = f"clients/{client}/{place}/{file}"
        boto3.client("s3").put_object(Bucket=self.bucket, Key=key, Body=text.encode())
        return key

    def finished(self, at_least: int = 1, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Every execution, newest first, once ``at_least`` exist and none runs."""
        return workflows.wait(self.state_machine, timeout=timeout, at_least=at_least)

    def rows(self, file: str) -> list[list[str]]:
        body = boto3.client("s3").get_object(Bucket=self.bucket, Key=f"clients/acme/download/{file}")["Body"]
        return list(csv.reader(io.StringIO(body.read().decode(), newline="")))

    def keys(self, prefix: str) -> list[str]:
        listed = boto3.client("s3").list_objects_v2(Bucket=self.bucket, Prefix=prefix)
        return sorted(item["Key"] for item in listed.get("Contents", []))

    def emails(self) -> list[dict[str, str]]:
        return sent_emails()


@pytest.fixture
def connect(make_api: Any, monkeypatch: pytest.MonkeyPatch) -> Connect:
    monkeypatch.setattr(retry_waits, "retry_delay_scale", 0.0)
    return Connect(make_api())


def batch_file(*details: str, key: str = ENROLL_KEY, count: int | None = None) -> str:
    trailer = len(details) if count is None else count
    return "\r\n".join([f"H,{key},verifiedUser", *details, f"T,{trailer}"]) + "\r\n"


def output_of(execution: dict[str, Any]) -> dict[str, Any]:
    output: dict[str, Any] = json.loads(execution["output"])
    return output


def assert_accounted(connect: Connect, rows_read: int) -> tuple[list[list[str]], list[list[str]]]:
    """Every detail row read is in exactly one of the output and error files; the trailers agree."""
    output = connect.rows(f"{STEM}_output.csv")
    errors = connect.rows(f"{STEM}_errors.csv")
    assert output[0] == ["H"]
    assert errors[0] == ["H", "verifiedUser"]
    assert output[-1] == ["T", str(len(output) - 2)]
    assert errors[-1] == ["T", str(len(errors) - 2)]
    assert len(output) - 2 + len(errors) - 2 == rows_read
    return output[1:-1], errors[1:-1]


# --- an upload runs the whole workflow ------------------------------------------------------------


def test_a_file_put_under_upload_is_verified_delivered_and_emailed(connect: Connect) -> None:
    # Given an onboarded client and a file with a passing, a failing, a refused, an invalid and a
    # duplicate row (BOM-less, CRLF, as a spreadsheet saves it)
    client_id = connect.onboard()
    text = batch_file(
        f"D,{LENA},Lena,Ortiz,cust-1",
        f"D,{HUGO},Hugh,Grant,cust-2",
        f"D,{NOBODY},Nobody,Known,cust-3",
        "D,,Mary,Shelley,cust-4",
        f"D,{LENA},Lena,Ortiz,cust-5",
    )

    # When the client puts it in their upload directory
    connect.upload(text)
    [execution] = connect.finished()

    # Then the workflow succeeded, and the batch was delivered
    assert execution["status"] == "SUCCEEDED"
    delivered = output_of(execution)
    assert delivered["state"] == "delivered"
    assert delivered["output"] == f"clients/acme/download/{STEM}_output.csv"
    assert delivered["errors"] == f"clients/acme/download/{STEM}_errors.csv"

    # And every row is in the output or the error file, in input order, with its outcome
    output, errors = assert_accounted(connect, rows_read=5)
    by_phone = {row[1]: dict(zip(OUTPUT_COLUMNS, row, strict=True)) for row in output}
    assert [row[1] for row in output] == [LENA, HUGO, NOBODY]
    assert by_phone[LENA]["GFP Authentication Result"] == "pass"
    assert by_phone[LENA]["ServiceID"] != ""
    assert by_phone[HUGO]["ServiceID"] == ""
    assert by_phone[NOBODY]["Error"] == "8007"
    assert [(row[1], row[4], row[5]) for row in errors] == [
        ("", "cust-4", "ERR_MISSING_PHONE"),
        (LENA, "cust-5", "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED"),
    ]

    stats = delivered["stats"]
    assert (stats["verified"], stats["notVerified"], stats["errorsByCode"]) == (1, 1, {"8007": 1})

    # And the passing row was enrolled, as /v3/verify enrolls it
    assert connect.api.container.enrollment_store.by_phone(client_id, LENA)

    # And the client got the "processed" email with the statistics, from the stack's sender
    [email] = connect.emails()
    assert (email["from"], email["to"]) == (SENDER, OPS)
    assert email["subject"] == f"PhoneID Connect: {FILE} processed"
    assert "Rows read: 5" in email["text"]
    assert "Duplicates: 1" in email["text"]
    assert "Lena" not in email["text"]

    # And the batch record says delivered; the work objects are gone; the workflow's own writes
    # under download/ started no execution
    batch = connect.api.container.batch_states.get(delivered["batchId"])
    assert batch is not None
    assert batch.state == BatchState.DELIVERED
    # (the local stack's console shows it from that record: every row done, one passed)
    shown = batch_row(batch, chunks_done=0)
    assert (shown["rows"], shown["done"], shown["passed"], shown["failed"]) == (5, 5, 1, 4)
    assert (shown["state"], shown["progress"], shown["file"]) == ("delivered", 1.0, FILE)
    assert connect.keys("work/") == []
    assert connect.keys("clients/acme/download/") == [
        f"clients/acme/download/{STEM}_errors.csv",
        f"clients/acme/download/{STEM}_output.csv",
    ]
    assert len(connect.finished()) == 1


def test_a_file_with_the_wrong_enroll_key_is_rejected_with_a_file_and_an_email(connect: Connect) -> None:
    # Given an onboarded client
    connect.onboard()

    # When a file signed with another Enroll Key is put
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz", key="not-the-enroll-key"))
    [execution] = connect.finished()

    # Then the workflow ends after validation: the file is rejected, nothing verified
    assert execution["status"] == "SUCCEEDED"
    validated = output_of(execution)["validated"]["batch"]
    assert (validated["outcome"], validated["reason"]) == ("rejected", "ENROLL_KEY_INVALID")
    rejected = dict(connect.rows(f"{STEM}_rejected.csv"))
    assert rejected["Reason Code"] == "ENROLL_KEY_INVALID"
    assert connect.keys("clients/acme/download/") == [f"clients/acme/download/{STEM}_rejected.csv"]
    assert connect.keys("work/") == []

    # And the client is told why
    [email] = connect.emails()
    assert email["to"] == OPS
    assert email["subject"] == f"PhoneID Connect: {FILE} rejected (ENROLL_KEY_INVALID)"
    batch = connect.api.container.batch_states.get(validated["batchId"])
    assert batch is not None
    assert batch.state == BatchState.REJECTED


def test_a_file_outside_an_upload_directory_starts_no_execution(connect: Connect) -> None:
    # Given an onboarded client
    connect.onboard()

    # When files appear beside the upload directories (the workflow's own kind of writes)
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz"), place="download")
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz"), place="elsewhere")

    # Then the rule did not match them (locally, a matching rule starts its execution within the put)
    assert workflows.executions(connect.state_machine) == []


# --- redelivery and retries -------------------------------------------------------------------------


def test_the_same_object_event_twice_is_processed_once(connect: Connect) -> None:
    # Given a file processed once
    connect.onboard()
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz", f"D,{NOBODY},Nobody,Known"))
    [first] = connect.finished()

    # When EventBridge delivers the same event again (at-least-once delivery)
    boto3.client("stepfunctions").start_execution(
        stateMachineArn=connect.state_machine, name=str(uuid.uuid4()), input=first["input"]
    )
    second, _ = connect.finished(at_least=2)

    # Then the second execution finds the batch claimed and stops: one output, one email
    assert second["status"] == "SUCCEEDED"
    assert output_of(second)["validated"]["batch"]["outcome"] == "duplicate"
    assert output_of(first)["state"] == "delivered"
    versions = boto3.client("s3").list_object_versions(
        Bucket=connect.bucket, Prefix=f"clients/acme/download/{STEM}_output.csv"
    )
    assert len(versions["Versions"]) == 1
    assert [email["subject"] for email in connect.emails()] == [f"PhoneID Connect: {FILE} processed"]


def test_a_file_uploaded_in_parts_starts_one_execution(connect: Connect) -> None:
    # Given an onboarded client
    connect.onboard()

    # When its file arrives as a multipart upload (as large files and the SFTP server's do)
    s3 = boto3.client("s3")
    key = f"clients/acme/upload/{FILE}"
    upload = s3.create_multipart_upload(Bucket=connect.bucket, Key=key)["UploadId"]
    body = batch_file(f"D,{LENA},Lena,Ortiz").encode()
    part = s3.upload_part(Bucket=connect.bucket, Key=key, UploadId=upload, PartNumber=1, Body=body)
    s3.complete_multipart_upload(
        Bucket=connect.bucket,
        Key=key,
        UploadId=upload,
        MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]},
    )

    # Then S3's one "Object Created" event started one execution, which delivered the batch
    [execution] = connect.finished()
    assert output_of(execution)["state"] == "delivered"


@dataclass
class FlakyVerify:
    """The real verification, but an upstream throttles the first ``throttle`` calls, and the rows of
    ``broken`` numbers fail with an unexpected error every time."""

    real: Any
    throttle: int = 0
    broken: frozenset[str] = frozenset()
    calls: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def verify_many(self, caller: Caller, items: Sequence[VerifyItem]) -> list[Verified | PhoneIdError]:
        with self.lock:
            self.calls.extend(item.phone_number for item in items)
            throttled = self.throttle > 0
            self.throttle -= 1
        if throttled:  # the first item's upstream throttled, as the real verification reports it
            try:
                raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "Query")
            except ClientError as error:
                refused = internal_error("Query", error)  # as the adapters translate it
                refused.__cause__ = error
            return [refused, *self.real.verify_many(caller, items[1:])]
        if any(item.phone_number in self.broken for item in items):
            raise RuntimeError("the verification broke")
        verified: list[Verified | PhoneIdError] = self.real.verify_many(caller, items)
        return verified


def test_a_chunk_throttled_once_is_retried_and_delivered_whole(connect: Connect) -> None:
    # Given an upstream that throttles the first verification of the batch
    connect.onboard()
    flaky = FlakyVerify(connect.api.container.verify, throttle=1)
    bootstrap.override(verify=flaky)

    # When a file is processed
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz", f"D,{NOBODY},Nobody,Known", f"D,{HUGO},Hugo,Code9014"))
    [execution] = connect.finished()

    # Then the chunk task failed with ChunkThrottled, was retried, and every row has its result
    assert execution["status"] == "SUCCEEDED"
    assert output_of(execution)["state"] == "delivered"
    assert flaky.throttle < 0
    assert len(flaky.calls) > 3
    output, errors = assert_accounted(connect, rows_read=3)
    assert sorted(row[1] for row in output) == sorted([LENA, NOBODY, HUGO])
    assert errors == []
    assert output_of(execution)["stats"]["processingFailed"] == 0


class AnswerLostAfterResults:
    """The Connect bucket, where the first chunk task to write its results then fails (its answer
    lost: a timeout, the instance gone), so Step Functions runs it again. ``written=False``: the
    results object itself fails to be written, after the task kept its rows' records."""

    def __init__(self, real: Any, *, written: bool = True) -> None:
        self.real = real
        self.written = written
        self.lost = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def put_text(self, key: str, text: str) -> None:
        lost_here = "/results/" in key and not self.lost
        if not lost_here or self.written:
            self.real.put_text(key, text)
        if lost_here:
            self.lost += 1
            raise RuntimeError("the task's answer was lost")


def test_a_chunk_task_run_again_after_writing_its_results_answers_from_them(connect: Connect) -> None:
    # Given a chunk task whose answer is lost once it has written its results
    connect.onboard()
    bucket = AnswerLostAfterResults(connect.api.container.objects)
    counted = FlakyVerify(connect.api.container.verify)
    bootstrap.override(objects=bucket, verify=counted)

    # When a file is processed
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz"))
    [execution] = connect.finished()

    # Then the task ran again, read the results it had written instead of verifying again, and the
    # batch was delivered whole
    assert execution["status"] == "SUCCEEDED"
    assert bucket.lost == 1
    assert counted.calls == [LENA]
    output, errors = assert_accounted(connect, rows_read=1)
    assert [row[1] for row in output] == [LENA]
    assert errors == []


def decision(connect: Connect, decision_id: str) -> tuple[int, dict[str, Any]]:
    """A decision record as the client reads it through the API."""
    assert connect.credentials is not None
    token = connect.api.token(connect.credentials)
    answer = connect.api.call("GET", f"/v3/decisions/{decision_id.replace('#', '%23')}", token=token)
    return answer.status, answer.json()


def test_each_verified_row_has_its_decision_record_found_by_id_and_by_number(connect: Connect) -> None:
    # Given a file with a passing, a failing and a refused row, and a row that is no row
    connect.onboard()
    connect.upload(
        batch_file(
            f"D,{LENA},Lena,Ortiz", f"D,{HUGO},Hugh,Grant", f"D,{NOBODY},Nobody,Known", "D,,Mary,Shelley"
        )
    )

    # When it is processed
    [execution] = connect.finished()
    batch_id = output_of(execution)["batchId"]

    # Then each verified row's record is under `{batchId}#{line}`, with its outcome
    records = [decision(connect, f"{batch_id}#{line}") for line in (2, 3, 4)]
    assert [status for status, _ in records] == [200, 200, 200]
    assert [(r["kind"], r["flow"], r["outcome"]) for _, r in records] == [
        ("connect", "verifiedUser", "pass"),
        ("connect", "verifiedUser", "fail"),
        ("connect", "verifiedUser", "error"),
    ]
    assert records[2][1]["errorCode"] == 8007
    assert records[0][1]["number"] == {"country": "US", "lastTwo": "12"}
    # The row refused before the chunks (no number) is in the error file, not a decision
    assert decision(connect, f"{batch_id}#5")[0] == 404
    assert connect.credentials is not None
    token = connect.api.token(connect.credentials)
    found = connect.api.call("GET", "/v3/decisions", token=token, query={"phoneNumber": LENA})
    assert [r["id"] for r in found.json()["results"]] == [f"{batch_id}#2"]
    summary = connect.api.call("GET", "/v3/decisions/summary", token=token).json()
    assert (summary["total"], summary["byKind"]) == (3, {"connect": 3})


def test_a_chunk_verified_again_keeps_its_records_once_and_counts_them_once(connect: Connect) -> None:
    # Given a chunk task that fails after keeping its rows' records, before writing its results
    connect.onboard()
    bucket = AnswerLostAfterResults(connect.api.container.objects, written=False)
    bootstrap.override(objects=bucket)

    # When a file of two rows is processed
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz", f"D,{HUGO},Hugh,Grant"))
    [execution] = connect.finished()

    # Then the task ran twice, and the summary counts each row once
    assert execution["status"] == "SUCCEEDED"
    assert bucket.lost == 1
    assert connect.credentials is not None
    token = connect.api.token(connect.credentials)
    summary = connect.api.call("GET", "/v3/decisions/summary", token=token).json()
    assert (summary["total"], summary["passed"], summary["failed"]) == (2, 1, 1)
    listed = connect.api.call("GET", "/v3/decisions", token=token).json()["results"]
    assert len(listed) == 2


def test_a_chunk_that_keeps_failing_is_reported_and_no_row_vanishes(connect: Connect) -> None:
    # Given chunks of two rows, and a row whose verification always breaks
    connect.onboard()
    container = connect.api.container
    flaky = FlakyVerify(container.verify, broken=frozenset({HUGO}))
    bootstrap.override(
        connect=connect_batches(container, verify=flaky.verify_many, chunk_rows=2, operator_emails=())
    )

    # When a file of three chunks is processed, the second holding the broken row
    connect.upload(
        batch_file(
            f"D,{LENA},Lena,Ortiz",
            f"D,{NOBODY},Nobody,Known",
            f"D,{HUGO},Hugo,Code9014",
            "D,+12025550198,Second,Chunk",
            "D,+12025550197,Third,Chunk",
        )
    )
    [execution] = connect.finished()

    # Then the broken chunk was tried as the Retry policy says (1 + 3 attempts), the others were
    # delivered, and the broken chunk's rows are in the error file, none lost
    assert flaky.calls.count(HUGO) == 4
    assert execution["status"] == "SUCCEEDED"
    delivered = output_of(execution)
    assert delivered["state"] == "failed"
    assert delivered["stats"]["processingFailed"] == 2
    output, errors = assert_accounted(connect, rows_read=5)
    assert [row[1] for row in output] == [LENA, NOBODY, "+12025550197"]
    assert [(row[1], row[5]) for row in errors] == [
        (HUGO, "ERR_PROCESSING_FAILED"),
        ("+12025550198", "ERR_PROCESSING_FAILED"),
    ]
    [email] = connect.emails()
    assert email["subject"] == f"PhoneID Connect: {FILE} processed, 2 rows not processed"
    batch = container.batch_states.get(delivered["batchId"])
    assert batch is not None
    assert batch.state == BatchState.FAILED


# --- a step that fails in any way ---------------------------------------------------------------------

OPERATOR = "operator@phoneid.example"


class Killed(BaseException):
    """The end of a worker process: no ``except Exception`` of the step runs, as when Lambda stops it."""


@dataclass
class LambdaRuntime:
    """The local stack's worker processes as a state machine's task sees them, for chosen functions:
    ``errors[name]`` is the Lambda error payload each of its next invocations answers (its process
    ran ``before`` — part of the real step, in this process — then died or overran its timeout);
    once the list is used up the function runs as it is. Every other function runs as usual."""

    errors: dict[str, list[dict[str, str]]]
    before: dict[str, Any] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def __contains__(self, logical_id: str) -> bool:
        return bool(self.errors.get(logical_id))

    def invoke(self, logical_id: str, event: Any) -> tuple[Any, dict[str, str] | None]:
        self.calls.append(logical_id)
        if logical_id in self.before:
            with contextlib.suppress(Killed):
                self.before[logical_id](event)
        return None, self.errors[logical_id].pop(0)


TIMED_OUT = {"errorType": "Sandbox.Timedout", "errorMessage": "Task timed out after 900.00 seconds"}
EXITED = {
    "errorType": "Runtime.ExitError",
    "errorMessage": "RequestId: x Error: Runtime exited with status 137",
}


def with_operator(connect: Connect) -> None:
    bootstrap.override(connect=connect_batches(connect.api.container, operator_emails=(OPERATOR,)))


def assert_failed_and_told(connect: Connect, execution: dict[str, Any], was: str, error: str) -> None:
    """What a failed step leaves: the execution FAILED, the batch failed, the client's rejected file
    and email, the operator's alert; no work objects."""
    assert execution["status"] == "FAILED"
    assert execution["error"] == "ConnectBatchFailed"
    [batch] = connect.api.container.batch_states.list_recent("acme")
    assert batch.state == BatchState.FAILED
    assert batch.reason == f"the workflow failed while the batch was {was}: {error}"
    rejected = dict(connect.rows(f"{STEM}_rejected.csv"))
    assert rejected["Reason Code"] == "PROCESSING_FAILED"
    assert connect.keys("work/") == []
    emails = {email["to"]: email for email in connect.emails()}
    assert emails[OPS]["subject"] == f"PhoneID Connect: {FILE} rejected (PROCESSING_FAILED)"
    assert emails[OPERATOR]["subject"] == f"PhoneID Connect: batch {batch.batch_id} failed ({FILE})"
    assert error in emails[OPERATOR]["text"]
    assert len(connect.emails()) == 2


def test_a_validation_that_overruns_its_timeout_ends_its_batch_failed(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a validation whose process is stopped mid-way, past its timeout: it claimed the batch
    # and was reading the file (no except clause of the step ran)
    connect.onboard()
    with_operator(connect)

    def stalls(self: Any, key: str, version_id: str | None = None) -> Any:
        raise Killed
        yield ""  # pragma: no cover

    def validate_until_killed(event: dict[str, Any]) -> None:
        monkeypatch.setattr(S3ObjectStore, "iter_text", stalls)
        bootstrap.container().connect.validate.run(
            event["bucket"], event["key"], event["versionId"], event["etag"]
        )

    runtime = LambdaRuntime(
        {"ConnectValidateFunction": [TIMED_OUT]}, {"ConnectValidateFunction": validate_until_killed}
    )
    monkeypatch.setattr(connect.api.stack, "processes", runtime)

    # When a file is uploaded
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz"))
    [execution] = connect.finished()

    # Then the batch is not left validating: it failed, the client and the operator were told, and
    # the execution failed (the alarm's metric)
    assert_failed_and_told(connect, execution, "validating", "Sandbox.Timedout")
    assert runtime.calls == ["ConnectValidateFunction"]


def test_a_delivery_whose_process_crashes_ends_its_batch_failed(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a deliver step whose process dies (out of memory, a crash)
    connect.onboard()
    with_operator(connect)
    runtime = LambdaRuntime({"ConnectDeliverFunction": [EXITED]})
    monkeypatch.setattr(connect.api.stack, "processes", runtime)

    # When a file is processed
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz", f"D,{NOBODY},Nobody,Known"))
    [execution] = connect.finished()

    # Then the batch is not left verifying
    assert_failed_and_told(connect, execution, "verifying", "Runtime.ExitError")
    assert connect.keys("clients/acme/download/") == [f"clients/acme/download/{STEM}_rejected.csv"]


def test_a_catch_all_step_that_fails_is_retried_until_the_batch_is_failed(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a validation that crashes, and a catch-all step whose first two runs crash too
    connect.onboard()
    with_operator(connect)
    runtime = LambdaRuntime({"ConnectValidateFunction": [EXITED], "ConnectFailFunction": [EXITED, TIMED_OUT]})
    monkeypatch.setattr(connect.api.stack, "processes", runtime)

    # When a file is uploaded
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz"))
    [execution] = connect.finished()

    # Then the catch-all ran a third time and ended the batch (claimed by nobody before it)
    assert runtime.calls == ["ConnectValidateFunction", "ConnectFailFunction", "ConnectFailFunction"]
    assert_failed_and_told(connect, execution, "validating", "Runtime.ExitError")


def test_an_execution_that_ended_without_its_catch_all_is_ended_by_the_status_rule(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a delivery that crashed and a catch-all that failed every retry: the execution failed
    # with the batch still verifying (as after a timeout of the whole execution, or a stop)
    connect.onboard()
    with_operator(connect)
    runtime = LambdaRuntime({"ConnectDeliverFunction": [EXITED], "ConnectFailFunction": [EXITED] * 9})
    monkeypatch.setattr(connect.api.stack, "processes", runtime)
    connect.upload(batch_file(f"D,{LENA},Lena,Ortiz"))
    [execution] = connect.finished()
    assert execution["status"] == "FAILED"
    [batch] = connect.api.container.batch_states.list_recent("acme")
    assert batch.state == BatchState.VERIFYING

    # When EventBridge delivers the execution's status change to the catch-all function (its rule)
    monkeypatch.setattr(connect.api.stack, "processes", None)
    event = {
        "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "detail": {
            "executionArn": execution["executionArn"],
            "stateMachineArn": connect.state_machine,
            "status": "TIMED_OUT",
            "input": execution["input"],
        },
    }
    ended = connect.api.stack.invoke(
        "ConnectFailFunction", event, function_context(connect.api.stack.template, "ConnectFailFunction")
    )

    # Then the batch is failed and the client and the operator told, once
    assert ended == {"batchId": batch.batch_id, "state": "failed", "changed": True}
    assert_failed_and_told(
        connect, execution | {"error": "ConnectBatchFailed"}, "verifying", "execution TIMED_OUT"
    )
    again = connect.api.stack.invoke(
        "ConnectFailFunction", event, function_context(connect.api.stack.template, "ConnectFailFunction")
    )
    assert again["changed"] is False
    assert len(connect.emails()) == 2


def test_a_cell_over_the_limit_is_its_rows_error_and_the_other_rows_are_verified(connect: Connect) -> None:
    # Given a file whose second row has a last name of 131,073 characters
    connect.onboard()
    long_name = "x" * 131_073

    # When it is processed
    connect.upload(
        batch_file(f"D,{LENA},Lena,Ortiz,cust-1", f"D,{HUGO},Hugo,{long_name},cust-2", f"D,{NOBODY},No,Body")
    )
    [execution] = connect.finished()

    # Then that row is ERR_FIELD_TOO_LONG and the others are verified: the file was not rejected
    assert execution["status"] == "SUCCEEDED"
    assert output_of(execution)["state"] == "delivered"
    output, errors = assert_accounted(connect, rows_read=3)
    assert [row[1] for row in output] == [LENA, NOBODY]
    assert [(row[1], row[4], row[5]) for row in errors] == [(HUGO, "cust-2", "ERR_FIELD_TOO_LONG")]
    assert len(errors[0][3]) == 131_072  # echoed cut to the limit


# --- scale ----------------------------------------------------------------------------------------

# Sandbox users whose verification runs in full (identity, signals, policy) and does not pass when
# the name is not theirs; they are reused with a different name on every row (no duplicates).
FULL_PATH = ("+13035550101", "+13035550103", "+13035550113", "+13035550114", "+13035550115")


def mixed_rows(count: int) -> list[str]:
    """Rows of every kind, in a repeating pattern of 20: 1 passing (the first only), 7 fully
    verified that do not pass, 6 refused (8007), 1 of each row error, 1 duplicate."""
    rows = []
    for n in range(count):
        kind = n % 20
        if n == 0:
            rows.append(f"D,{LENA},Lena,Ortiz,c{n}")
        elif kind < 8:
            rows.append(f"D,{FULL_PATH[n % len(FULL_PATH)]},Given{n},Family{n},c{n}")
        elif kind < 14:
            rows.append(f"D,+1202{7000000 + n:07d},Given{n},Family{n},c{n}")
        elif kind == 14:
            rows.append(f"D,+12027{n:06d},,Family{n},c{n}")
        elif kind == 15:
            rows.append(f"D,+12027{n:06d},Given{n},,c{n}")
        elif kind == 16:
            rows.append(f"D,,Given{n},Family{n},c{n}")
        elif kind == 17:
            rows.append(f"D,2027{n:06d},Given{n},Family{n},c{n}")
        elif kind == 18:
            rows.append(f"D,+4420{n:08d},Given{n},Family{n},c{n}")
        else:
            rows.append(f"D,+12028{n:06d},Given{n},Family{n},c{n - 6}")  # a valid row's customer id
    return rows


def test_a_mixed_10000_row_file_runs_through_the_whole_workflow(connect: Connect) -> None:
    # Given a 10,000-row file of every kind of row (10 chunks)
    connect.onboard()
    text = batch_file(*mixed_rows(10_000))

    # When it is uploaded
    started = time.perf_counter()
    connect.upload(text)
    [execution] = connect.finished(timeout=300)
    seconds = time.perf_counter() - started

    # Then every row is accounted for, and the statistics add up
    assert execution["status"] == "SUCCEEDED", execution.get("error")
    delivered = output_of(execution)
    assert delivered["state"] == "delivered"
    stats = delivered["stats"]
    output, _ = assert_accounted(connect, rows_read=10_000)
    assert stats["rowsRead"] == 10_000
    assert stats["rejectedByCode"] == {
        "ERR_MISSING_FNAME": 500,
        "ERR_MISSING_LNAME": 500,
        "ERR_MISSING_PHONE": 500,
        "ERR_FORMAT_PHONE": 500,
        "ERR_PHONE_COUNTRY_NOTSUPPORTED": 500,
        "ERR_DUPLICATE_RECORD_ORIGINAL_PRESERVED": 500,
    }
    assert stats["valid"] == len(output) == 7000
    assert stats["verified"] == stats["enrolled"] == 1
    assert stats["notVerified"] == 3999
    assert stats["errorsByCode"] == {"8007": 3000}
    assert stats["processingFailed"] == 0
    assert [row[4] for row in output] == sorted((row[4] for row in output), key=lambda c: int(c[1:]))
    print(f"\n10,000 rows through the workflow on moto: {seconds:.1f} s")
