"""`phoneid connect submit`'s upload-and-poll: the file uploaded, its batch followed with each change
shown, the results fetched beside it; or, when the batch does not finish in time, said so. The
workflow runs in another process: here it is stood in for at each poll, and time is a fake's."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from phoneid.domain.connect import Batch, BatchState, download_key
from phoneid_cli.submission import Submission
from tests.fakes import START, FakeClock, InMemoryBatchStates

NAME = "acme_US_verifiedUser_20260101120000.csv"


@dataclass
class FakeS3:
    """The Connect bucket: what was uploaded, what the batch wrote, and chunk results done."""

    objects: dict[str, bytes] = field(default_factory=dict)
    chunks_done: int = 0

    def upload_file(self, path: str, bucket: str, key: str, Callback: Any) -> None:  # noqa: N803
        body = Path(path).read_bytes()
        self.objects[key] = body
        Callback(len(body))

    def head_object(self, Bucket: str, Key: str) -> dict[str, Any]:  # noqa: N803
        return {"ETag": '"etag-1"'}

    def download_file(self, bucket: str, key: str, target: str) -> None:
        if key not in self.objects:
            raise ClientError({"Error": {"Code": "404", "Message": "Not Found"}}, "HeadObject")
        Path(target).write_bytes(self.objects[key])

    def get_paginator(self, name: str) -> Any:
        s3 = self

        class Pages:
            def paginate(self, **_: Any) -> list[dict[str, int]]:
                return [{"KeyCount": s3.chunks_done}]

        return Pages()


@dataclass
class Polling:
    """Fake time for the loop: each sleep moves the clock on and lets the workflow take a step."""

    steps: list[Any] = field(default_factory=list)
    seconds: float = 0.0
    sleeps: int = 0

    def monotonic(self) -> float:
        return self.seconds

    def sleep(self, seconds: float) -> None:
        self.seconds += seconds
        self.sleeps += 1
        if self.steps:
            self.steps.pop(0)()


def submission(s3: FakeS3, states: InMemoryBatchStates, polling: Polling, shown: list[str]) -> Submission:
    return Submission(
        s3=s3,
        bucket="connect",
        states=states,
        progress=lambda line, final: shown.append(line + (" (final)" if final else "")),
        now=FakeClock().now,
        monotonic=polling.monotonic,
        sleep=polling.sleep,
    )


def test_a_submitted_file_is_followed_to_its_end_and_its_results_written_beside_it(tmp_path: Path) -> None:
    # Given a batch file of client acme, and a workflow that picks it up, verifies it in 4 chunks and
    # delivers its output
    path = tmp_path / NAME
    path.write_text("H,key,verifiedUser\r\nT,0\r\n")
    s3, states, shown = FakeS3(), InMemoryBatchStates(), []
    polling = Polling()
    service = submission(s3, states, polling, shown)
    uploaded = service.upload(path, "acme")
    batch = Batch(
        batch_id=uploaded.batch_id,
        key=uploaded.key,
        file_name=NAME,
        client_name="acme",
        state=BatchState.VERIFYING,
        created_at=START,
        updated_at=START,
        chunks=4,
    )

    def delivered() -> None:
        states.items[batch.batch_id] = replace(batch, state=BatchState.DELIVERED, counts={"valid": 1})
        s3.objects[download_key("acme", NAME.replace(".csv", "_output.csv"))] = b"H\r\n"

    polling.steps = [lambda: states.claim(batch), lambda: setattr(s3, "chunks_done", 2), delivered]

    # When it is followed, then its results fetched
    done = service.follow(path, "acme", uploaded, timeout=60)
    written = service.download_results(path, "acme")

    # Then every change was shown once, the last as final, and what the batch wrote is beside the file
    assert done is not None
    assert done.state is BatchState.DELIVERED
    assert s3.objects[f"clients/acme/upload/{NAME}"] == path.read_bytes()
    assert shown == [
        f"{NAME}: uploading 100% of 25 bytes",
        f"{NAME}: uploaded to s3://connect/clients/acme/upload/{NAME} (final)",
        f"{NAME}: waiting for the workflow to pick the file up",
        f"{NAME}: verifying [..............................] 0/4 chunks",
        f"{NAME}: verifying [###############...............] 2/4 chunks",
        f"{NAME}: delivered   valid=1 (final)",
    ]
    assert [p.name for p in written] == [NAME.replace(".csv", "_output.csv")]
    assert written[0].read_bytes() == b"H\r\n"


def test_a_batch_that_does_not_finish_in_time_is_said_so(tmp_path: Path) -> None:
    # Given a file nobody picks up
    path = tmp_path / NAME
    path.write_text("H,key,verifiedUser\r\nT,0\r\n")
    shown: list[str] = []
    polling = Polling()
    service = submission(FakeS3(), InMemoryBatchStates(), polling, shown)
    uploaded = service.upload(path, "acme")

    # When followed for 2 seconds
    done = service.follow(path, "acme", uploaded, timeout=2)

    # Then no batch, polled every half second, and the last line says how long it waited
    assert done is None
    assert polling.sleeps == 4
    assert shown[-1] == f"{NAME}: still not finished after 2 s (final)"


def test_a_batch_of_an_earlier_upload_of_the_same_key_is_not_this_ones(tmp_path: Path) -> None:
    # Given a batch of the same key created well before this upload, under another version's id
    path = tmp_path / NAME
    path.write_text("H,key,verifiedUser\r\nT,0\r\n")
    states, shown = InMemoryBatchStates(), []
    earlier = START - timedelta(minutes=10)
    states.claim(
        Batch("older", f"clients/acme/upload/{NAME}", NAME, "acme", BatchState.DELIVERED, earlier, earlier)
    )
    service = submission(FakeS3(), states, Polling(), shown)

    # When this upload is followed
    done = service.follow(path, "acme", service.upload(path, "acme"), timeout=1)

    # Then the earlier batch is not taken for it
    assert done is None
