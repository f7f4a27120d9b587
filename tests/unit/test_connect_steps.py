"""The Connect workflow's step inputs and results as the state machine and EventBridge exchange them
(``phoneid.api.connect_steps``): what each handler reads, and the JSON each step answers."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from phoneid.api.connect_steps import (
    Accepted,
    BatchTask,
    ChunkTask,
    ChunkVerified,
    Delivered,
    Duplicate,
    Ended,
    FailedUpload,
    NotAnUpload,
    Rejected,
    UploadedObject,
)
from phoneid.domain.connect import BatchState, BatchStats

UPLOAD_KEY = "clients/acme/upload/acme_US_verifiedUser_20261122120000.csv"


def test_validate_reads_the_uploaded_object_and_takes_empty_version_and_etag_as_absent() -> None:
    # Given the execution's input as the S3 event rule shapes it, once versioned and once not
    versioned = {"bucket": "connect", "key": UPLOAD_KEY, "versionId": "v1", "etag": '"e"', "extra": 1}
    unversioned = {"bucket": "connect", "key": UPLOAD_KEY, "versionId": "", "etag": ""}

    # When read / Then the object is named, and "" is no version or ETag
    upload = UploadedObject.model_validate(versioned)
    assert (upload.bucket, upload.key, upload.version_id, upload.etag) == ("connect", UPLOAD_KEY, "v1", '"e"')
    bare = UploadedObject.model_validate(unversioned)
    assert (bare.version_id, bare.etag) == (None, None)


def test_validate_refuses_an_input_without_its_object() -> None:
    with pytest.raises(ValidationError):
        UploadedObject.model_validate({"bucket": "connect"})


def test_verify_and_deliver_read_the_manifest_item_and_the_batch_id() -> None:
    # Given a manifest item (its chunk as Step Functions may pass a number) and Deliver's payload
    task = ChunkTask.model_validate({"batchId": "b1", "chunk": "3", "key": "work/b1/chunks/00003.jsonl"})
    batch = BatchTask.model_validate({"batchId": "b1"})

    # Then each is typed
    assert (task.batch_id, task.chunk, task.key) == ("b1", 3, "work/b1/chunks/00003.jsonl")
    assert batch.batch_id == "b1"


def test_the_catch_all_reads_a_failed_task_with_the_error_step_functions_caught() -> None:
    # Given the state machine's catch: the execution's input and $.failure
    caught = {
        "bucket": "connect",
        "key": UPLOAD_KEY,
        "versionId": "",
        "etag": '"e"',
        "failure": {"Error": "Sandbox.Timedout", "Cause": "{...}"},
    }

    # When read / Then the upload and the error's name
    assert FailedUpload.of(caught) == FailedUpload(
        key=UPLOAD_KEY, version_id=None, etag='"e"', error="Sandbox.Timedout"
    )
    # And a catch without an error's name is a failed task
    assert FailedUpload.of({"key": UPLOAD_KEY}).error == "States.TaskFailed"
    assert FailedUpload.of({"key": UPLOAD_KEY, "failure": None}).error == "States.TaskFailed"


def test_the_catch_all_reads_an_execution_status_change_from_eventbridge() -> None:
    # Given an execution that timed out (no error name) and one that failed, as EventBridge tells
    execution_input = json.dumps({"bucket": "connect", "key": UPLOAD_KEY, "versionId": "v1", "etag": ""})
    timed_out = {"detail": {"status": "TIMED_OUT", "input": execution_input, "error": None}}
    failed = {"detail": {"status": "FAILED", "input": execution_input, "error": "States.Runtime"}}

    # When read / Then the execution's upload, and the error or the status
    assert FailedUpload.of(timed_out) == FailedUpload(
        key=UPLOAD_KEY, version_id="v1", etag=None, error="execution TIMED_OUT"
    )
    assert FailedUpload.of(failed).error == "States.Runtime"


def test_the_catch_all_finds_no_upload_in_an_execution_without_one() -> None:
    # Given executions whose input names no upload
    no_input = {"detail": {"status": "ABORTED"}}
    empty_key = {"key": "", "failure": {"Error": "States.TaskFailed"}}

    # Then there is nothing to end, and the answer says so
    assert FailedUpload.of(no_input).key is None
    assert FailedUpload.of(empty_key).key is None
    assert NotAnUpload().to_json() == {"batchId": None, "state": None, "changed": False}


def test_each_step_answers_the_json_the_state_machine_reads() -> None:
    # Given each step's result
    stats = BatchStats(rows_read=3, valid=2, verified=2)

    # Then its JSON has the names the state machine and the tests read
    assert Accepted("b1", "work/b1/manifest.json", 2).to_json() == {
        "batchId": "b1",
        "outcome": "accepted",
        "manifestKey": "work/b1/manifest.json",
        "chunks": 2,
    }
    assert Rejected("b1", "FILE_EMPTY").to_json() == {
        "batchId": "b1",
        "outcome": "rejected",
        "reason": "FILE_EMPTY",
    }
    assert Duplicate("b1").to_json() == {"batchId": "b1", "outcome": "duplicate"}
    assert ChunkVerified(0, 50, 49).to_json() == {"chunk": 0, "rows": 50, "passed": 49}
    assert Delivered("b1", BatchState.DELIVERED, "o.csv", "e.csv", stats).to_json() == {
        "batchId": "b1",
        "state": "delivered",
        "output": "o.csv",
        "errors": "e.csv",
        "stats": stats.to_json(),
    }
    assert Ended("b1", BatchState.FAILED, changed=True).to_json() == {
        "batchId": "b1",
        "state": "failed",
        "changed": True,
    }
