"""The Connect workflow's AWS adapters on moto: the bucket (streamed lines, multipart writer), the
batch records (conditional writes) and the emails (SES)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import boto3
import pytest

from phoneid.adapters import s3 as s3_adapter
from phoneid.adapters.dynamodb.connect_batches import DynamoBatchStates
from phoneid.adapters.s3 import ObjectNotFound, S3ObjectStore, iter_text, split_lines
from phoneid.adapters.ses import SesMailer
from phoneid.domain.connect import Batch, BatchState
from phoneid_dev.outbox import sent_emails
from tests.fakes import START
from tests.harness import Api

MIB = 1024 * 1024


@pytest.fixture
def api(make_api: Any) -> Api:
    made: Api = make_api()
    return made


@pytest.fixture
def store(api: Api) -> S3ObjectStore:
    return S3ObjectStore(boto3.client("s3"), api.stack.physical_ids["ConnectBucket"], part_size=5 * MIB)


def chunks(data: bytes, size: int) -> Iterator[bytes]:
    return iter([data[i : i + size] for i in range(0, len(data), size)])


# --- reading ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64 * 1024])
def test_lines_are_the_same_whatever_the_chunks(size: int) -> None:
    # Given a spreadsheet's file: a BOM, CRLF (one split between chunks when size is odd), a
    # multi-byte character, an empty line, and no line end at the very end
    data = "\ufeffH,key,verifiedUser\r\nD,+12025550112,Léna,Ortiz\r\n\r\nD,+1,A,B\nT,2".encode()

    # When it is read in chunks of ``size`` bytes
    lines = list(split_lines(chunks(data, size)))

    # Then the lines are the file's, without their ends, the BOM gone
    assert lines == ["H,key,verifiedUser", "D,+12025550112,Léna,Ortiz", "", "D,+1,A,B", "T,2"]


def test_a_final_line_end_makes_no_extra_line_and_a_lone_cr_ends_a_line() -> None:
    assert list(split_lines(iter([b"a\rb\r", b""]))) == ["a", "b"]
    assert list(split_lines(iter([b"a\n"]))) == ["a"]
    assert list(split_lines(iter([b""]))) == []


def test_bytes_that_are_not_utf8_raise_where_they_are_met() -> None:
    lines = split_lines(iter([b"H,key\n", b"\xff\xfe\x00binary\n"]))

    assert next(lines) == "H,key"
    with pytest.raises(UnicodeDecodeError):
        next(lines)


def test_a_long_line_costs_its_length_not_its_square() -> None:
    # Given a 16 MiB line in 64 KiB chunks, each piece of text seen (sizes only: no text kept)
    data = b"D,+12025550112,Lena," + b"x" * (16 * MIB) + b"\r\nT,1"
    scanned: list[int] = []
    real_finditer = s3_adapter._END_OF_LINE.finditer

    class Watched:
        @staticmethod
        def finditer(text: str, *args: int) -> Iterator[re.Match[str]]:
            scanned.append(len(text) - (args[0] if args else 0))
            return real_finditer(text, *args)

        split = s3_adapter._END_OF_LINE.split

    # When it is split into lines
    original = s3_adapter._END_OF_LINE
    s3_adapter._END_OF_LINE = Watched  # type: ignore[assignment]
    try:
        lines = list(split_lines(chunks(data, 64 * 1024)))
    finally:
        s3_adapter._END_OF_LINE = original

    # Then each character was searched for a line end once (the old splitter searched the whole
    # line so far at every chunk: 128 times the line's length here)
    assert [len(line) for line in lines] == [len(data) - 5, 3]
    assert sum(scanned) <= len(data)


@pytest.mark.parametrize("size", [1, 2, 5, 64 * 1024])
def test_text_comes_in_pieces_decoded_whatever_the_chunks(size: int) -> None:
    # Given a BOM, a multi-byte character split between chunks, CRLF line ends
    data = '\ufeffH,key\r\nD,+1,Léna,"O\r\nrtiz"\r\n'.encode()

    # When decoded in chunks / Then the pieces join to the text, line ends kept, the BOM gone
    assert "".join(iter_text(chunks(data, size))) == 'H,key\r\nD,+1,Léna,"O\r\nrtiz"\r\n'


def test_an_object_is_read_as_lines_by_version(store: S3ObjectStore) -> None:
    # Given two versions of one object (not an upload: that would start a workflow outliving the test)
    s3 = boto3.client("s3")
    key = "clients/acme/download/file.csv"
    first = s3.put_object(Bucket=store.bucket, Key=key, Body=b"\xef\xbb\xbfone\r\ntwo\r\n")["VersionId"]
    s3.put_object(Bucket=store.bucket, Key=key, Body=b"three\n")

    # Then each version reads as its own lines
    assert list(store.iter_lines(key, version_id=first)) == ["one", "two"]
    assert list(store.iter_lines(key)) == ["three"]
    assert "".join(store.iter_text(key, version_id=first)) == "one\r\ntwo\r\n"
    assert "".join(store.iter_text(key)) == "three\n"
    assert store.exists(key)
    assert not store.exists("clients/acme/download/other.csv")
    with pytest.raises(ObjectNotFound):
        list(store.iter_lines("clients/acme/download/other.csv"))


# --- writing ---------------------------------------------------------------------------------------


def test_a_large_text_is_written_in_parts_and_appears_when_closed(store: S3ObjectStore) -> None:
    # Given a writer of parts of 5 MiB
    key = "clients/acme/download/big_output.csv"
    line = "D,+12025550112,Lena,Ortiz,cust-1,,,,AL2,2B,ALIAS,svc,,,pass,pass\n"
    writer = store.open_writer(key)

    # When 11 MiB are written, a line at a time
    written = 0
    while written < 11 * MIB:
        writer.write(line)
        written += len(line)
    assert not store.exists(key)  # nothing before close
    writer.close()

    # Then the object is whole, from a multipart upload of three parts
    head = boto3.client("s3").head_object(Bucket=store.bucket, Key=key, PartNumber=1)
    assert head["PartsCount"] == 3
    assert sum(1 for _ in store.iter_lines(key)) == written // len(line)


def test_a_small_text_is_one_put_and_an_abandoned_writer_leaves_nothing(store: S3ObjectStore) -> None:
    with store.open_writer("work/b1/errors.jsonl") as writer:
        writer.write('{"line": 2}\n')

    def broken_step() -> None:
        with store.open_writer("work/b1/abandoned.csv") as abandoned:
            abandoned.write("x" * (6 * MIB))  # one part uploaded
            raise RuntimeError("the step broke")

    with pytest.raises(RuntimeError):
        broken_step()

    assert store.get_text("work/b1/errors.jsonl") == '{"line": 2}\n'
    assert not store.exists("work/b1/abandoned.csv")
    uploads = boto3.client("s3").list_multipart_uploads(Bucket=store.bucket)
    assert uploads.get("Uploads", []) == []


def test_a_prefix_is_deleted_and_nothing_beside_it(store: S3ObjectStore) -> None:
    for n in range(1203):
        store.put_text(f"work/b1/chunks/{n:05d}.jsonl", "{}\n")
    store.put_text("work/b10/manifest.json", "[]")

    assert store.delete_prefix("work/b1/") == 1203
    assert store.exists("work/b10/manifest.json")
    with pytest.raises(ValueError, match="whole bucket"):
        store.delete_prefix("")


def test_an_object_exists_under_its_own_key_not_under_one_its_key_begins(store: S3ObjectStore) -> None:
    # Given a chunk's results (the check lists the prefix: the functions may list work/ only)
    store.put_text("work/b2/results/000001.jsonl", "{}\n")

    # Then only its own key finds it
    assert store.exists("work/b2/results/000001.jsonl")
    assert not store.exists("work/b2/results/000001")
    assert not store.exists("work/b2/results/")
    assert not store.exists("work/b2/results/000002.jsonl")


# --- batch records ---------------------------------------------------------------------------------


def batch(batch_id: str = "b1", client: str = "acme", minutes: int = 0) -> Batch:
    at = START + timedelta(minutes=minutes)
    return Batch(
        batch_id=batch_id,
        key=f"clients/{client}/upload/{client}_US_verifiedUser_20260301120000.csv",
        file_name=f"{client}_US_verifiedUser_20260301120000.csv",
        client_name=client,
        state=BatchState.VALIDATING,
        created_at=at,
        updated_at=at,
    )


def test_a_batch_is_claimed_once_and_changes_state_only_from_the_state_read(api: Api) -> None:
    states = DynamoBatchStates(boto3.client("dynamodb"), api.stack.physical_ids["ConnectBatchesTable"])
    claimed = batch()

    assert states.claim(claimed)
    assert not states.claim(replace(claimed, client_name="other"))  # the redelivered event
    verifying = replace(
        claimed, state=BatchState.VERIFYING, chunks=3, counts={"rowsRead": 2500, "rejected:X": 1}
    )
    assert states.update(verifying, BatchState.VALIDATING)
    assert not states.update(replace(verifying, state=BatchState.REJECTED), BatchState.VALIDATING)
    assert not states.update(replace(batch("nope"), state=BatchState.VERIFYING), BatchState.VALIDATING)

    assert states.get("b1") == verifying
    assert states.get("nope") is None
    [item] = api.table_items("ConnectBatchesTable")
    assert int(item["ttl"]["N"]) == int((START + timedelta(days=90)).timestamp())


def test_recent_batches_are_listed_newest_first_by_client(api: Api) -> None:
    states = DynamoBatchStates(boto3.client("dynamodb"), api.stack.physical_ids["ConnectBatchesTable"])
    for n, client in enumerate(["acme", "globex", "acme", "acme"]):
        states.claim(batch(f"b{n}", client, minutes=n))

    assert [b.batch_id for b in states.list_recent()] == ["b3", "b2", "b1", "b0"]
    assert [b.batch_id for b in states.list_recent("acme", limit=2)] == ["b3", "b2"]


# --- emails ----------------------------------------------------------------------------------------


def test_an_email_goes_from_the_sender_to_every_address_in_groups_of_fifty(api: Api) -> None:
    mailer = SesMailer(boto3.client("sesv2"), "connect@phoneid.invalid")
    recipients = [f"ops{n}@acme.example" for n in range(51)]

    mailer.send([*recipients, recipients[0]], "PhoneID Connect: file processed", "Rows read: 3")
    mailer.send([], "nobody", "nothing")

    sent = sent_emails()
    assert [len(email["to"].split(", ")) for email in sent] == [50, 1]
    assert {email["from"] for email in sent} == {"connect@phoneid.invalid"}
    assert sent[0]["subject"] == "PhoneID Connect: file processed"
    assert sent[0]["text"] == "Rows read: 3"
