"""``phoneid dev --data DIR`` on moto in this process: a stack's state saved to a data directory, moto
emptied as a new process starts it, the template provisioned afresh with the kept keys and the state
put back; then everything works as before (docs/adr/0106-local-state-kept-in-a-data-directory.md)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.core.base_backend import BackendDict

from phoneid import bootstrap
from phoneid.adapters.dynamodb.history import DynamoHistoryStore
from phoneid.domain.identity import Identity
from phoneid.domain.signals import ChangeEvent, ChangeKind
from phoneid_dev.snapshot import services, state
from phoneid_dev.snapshot.directory import DataDirectory, DataRefused, StackKind
from phoneid_dev.snapshot.own_clients import OwnClients
from phoneid_dev.stack import LocalStack
from phoneid_dev.triggers import pollers
from tests.fakes import FakeClock
from tests.harness import Api, Credentials, Integrator
from tests.identities import Identities
from tests.integration.test_decision_records import staged_flow

SANDBOX_US = StackKind("sandbox", "US", "us-east-1")


@pytest.fixture
def receiver() -> Iterator[tuple[list[tuple[dict[str, str], bytes]], str]]:
    """A webhook receiver on loopback: every POST's headers and body."""
    received: list[tuple[dict[str, str], bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            return

        def do_POST(self) -> None:
            received.append(
                (dict(self.headers.items()), self.rfile.read(int(self.headers["Content-Length"])))
            )
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield received, f"http://127.0.0.1:{server.server_address[1]}/events"
    server.shutdown()
    server.server_close()


def _restarted(api: Api, directory: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> Api:
    """What a new ``phoneid dev --data directory`` does: an empty moto, the template provisioned
    with the kept keys, the kept state put back, the container built on the new stack."""
    BackendDict.reset()
    snapshot = DataDirectory(directory).load(SANDBOX_US)
    assert snapshot is not None
    stack = LocalStack(
        parameters=api.stack.parameters, overrides=api.stack.overrides, kept_keys=snapshot["kmsKeys"]
    ).provision()
    state.put_back(stack, snapshot)
    for name, value in stack.environment().items():
        monkeypatch.setenv(name, value)
    bootstrap.reset()
    bootstrap.override(clock=clock)
    return Api(stack, clock)


def test_every_kind_of_state_works_again_after_a_restart_from_the_data_directory(
    make_api: Callable[..., Api],
    clock: FakeClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    receiver: tuple[list[tuple[dict[str, str], bytes]], str],
) -> None:
    # Given a stack with a client and its token, an identity it enrolled, an operator's identity with
    # SSN and date of birth, a Connect client onboarded with a file in the bucket, and a webhook with
    # a delivery still queued
    api = make_api()
    credentials = api.create_client()
    integrator = Integrator(api, credentials)
    token_before = integrator.access_token
    service_id = Identities(api, integrator).enrolled(phoneNumber="+12025550140", clientCustomerId="c-1")
    operators_identity = Identity("+12025550141", "Ada", "Lovelace", dob="1990-12-10", ssn="123456789")
    api.container.identity_store.put_many([operators_identity])
    name = f"acme-{uuid.uuid4().hex[:6]}"
    api.container.connect_onboarding.onboard(credentials.client_id, name, types=["verifiedUser"])
    bucket = api.stack.physical_ids["ConnectBucket"]
    s3: Any = boto3.client("s3")
    upload = f"clients/{name}/upload/{name}_20261126.csv"
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={})  # no batch here
    s3.put_object(Bucket=bucket, Key=upload, Body=b"phoneNumber\n+12025550140\n", ContentType="text/csv")
    received, url = receiver
    webhook = api.container.client_admin.set_webhook(credentials.client_id, url)
    event = ChangeEvent(
        f"evt-{uuid.uuid4().hex}",
        ChangeKind.SIM_SWAP,
        "+12025550140",
        datetime.now(UTC),
        credentials.client_id,
    )
    api.container.webhook_queue.send(event)

    # When its state is saved to a data directory, and a new start loads it into a fresh moto
    directory = tmp_path / "data"
    DataDirectory(directory).save(
        SANDBOX_US,
        state.taken(
            api.stack, 3600.0, {"banner": {"client_id": credentials.client_id, "client_secret": "s"}}
        ),
    )
    restarted = _restarted(api, directory, clock, monkeypatch)

    # Then the token issued before still verifies, and the credentials give a new one
    kept = Identities(restarted, Integrator(restarted, credentials))
    kept.integrator._token = token_before
    answer = kept.get(service_id)
    assert answer.status == 200, answer.body
    assert answer.json()["clientCustomerId"] == "c-1"
    assert restarted.token(Credentials(credentials.client_id, credentials.client_secret))
    # And the sealed SSN and date of birth open
    assert restarted.container.identity_store.find("+12025550141") == operators_identity
    # And the Connect profile and its file are there, the file starting no batch again
    profile = restarted.container.connect_profiles.get_by_name(name)
    assert profile is not None
    assert profile.client_id == credentials.client_id
    assert s3.get_object(Bucket=bucket, Key=upload)["Body"].read() == b"phoneNumber\n+12025550140\n"
    sfn: Any = boto3.client("stepfunctions")
    machine = restarted.stack.physical_ids["ConnectStateMachine"]
    assert sfn.list_executions(stateMachineArn=machine)["executions"] == []
    # And the queued delivery is made, signed with the webhook's secret
    delivered = [poller.drain() for poller in pollers(restarted.stack)]
    assert sum(polled.received for polled in delivered) == 1
    ((headers, body),) = received
    signed = hmac.new(
        webhook.secret.encode(), headers["PhoneID-Timestamp"].encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    assert headers["PhoneID-Signature"] == f"v1={signed}"
    assert headers["PhoneID-Event-Id"] == event.event_id
    # And the clock's offset and the banner's client are kept
    snapshot = json.loads((directory / "stack.json").read_text())
    assert snapshot["clockOffsetSeconds"] == 3600.0
    assert snapshot["ownClients"]["banner"]["client_id"] == credentials.client_id


def test_a_delivery_waiting_out_its_backoff_keeps_its_attempts_and_its_wait(
    make_api: Callable[..., Api], clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a queued delivery received twice and hidden for its backoff
    api = make_api()
    sqs: Any = boto3.client("sqs")
    queue_url = api.stack.physical_ids["WebhookQueue"]
    sqs.send_message(QueueUrl=queue_url, MessageBody="{}")
    for _ in range(2):
        (message,) = sqs.receive_message(QueueUrl=queue_url)["Messages"]
        sqs.change_message_visibility(
            QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
    sqs.receive_message(QueueUrl=queue_url, VisibilityTimeout=600)

    # When the stack is saved and started again
    DataDirectory(tmp_path).save(SANDBOX_US, state.taken(api.stack, 0.0, {}))
    restarted = _restarted(api, tmp_path, clock, monkeypatch)

    # Then the message is still hidden for what was left of its backoff, its receives counted
    restarted_url = restarted.stack.physical_ids["WebhookQueue"]
    assert sqs.receive_message(QueueUrl=restarted_url).get("Messages", []) == []
    attributes = sqs.get_queue_attributes(QueueUrl=restarted_url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "1"
    (kept,) = services.export_queues(restarted.stack)["WebhookQueue"]
    assert kept["receiveCount"] == 3
    assert 500 < kept["hiddenSeconds"] <= 600


def test_the_stacks_own_clients_are_kept_and_a_seeded_one_must_keep_its_secret(
    make_api: Callable[..., Api],
) -> None:
    # Given a stack that has the banner's client, kept with its secret
    api = make_api()
    credentials = api.create_client()
    kept = {"client_id": credentials.client_id, "client_secret": credentials.client_secret}
    own = OwnClients({"banner": kept}, "/data")
    made: list[str] = []

    def make() -> dict[str, str]:
        made.append("made")
        return {"client_id": "new", "client_secret": "new"}

    # When the banner's client and the demo's (never kept) are asked for
    # Then the kept one is given as it is, and only the demo's is made
    assert own.get("banner", make) == kept
    assert own.get("demo", make) == {"client_id": "new", "client_secret": "new"}
    assert made == ["made"]
    assert own.kept == {"banner": kept, "demo": {"client_id": "new", "client_secret": "new"}}

    # And a seeded client the directory holds with another secret is refused, saying what to do
    with pytest.raises(DataRefused) as refused:
        own.get("banner", make, {"client_id": credentials.client_id, "client_secret": "x" * 40})
    assert str(refused.value) == (
        f"--data /data: client {credentials.client_id} is kept there with another secret: "
        "seed the secret it was made with, or use another directory"
    )


def test_a_restart_from_the_data_directory_appends_no_record_twice_and_goes_on_with_new_ones(
    make_api: Callable[..., Api], clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a client's two decisions appended to its history
    api = make_api()
    credentials = api.create_client()
    before = [staged_flow(Integrator(api, credentials)) for _ in range(2)]
    assert api.invoke("DecisionLogFunction", {})["appended"] == 2

    # When the stack is saved, started again from its data, and its appends run
    DataDirectory(tmp_path).save(SANDBOX_US, state.taken(api.stack, 0.0, {}))
    restarted = _restarted(api, tmp_path, clock, monkeypatch)
    again = restarted.invoke("DecisionLogFunction", {})

    # Then the records put back are not appended again, and a new decision is appended after them
    after = staged_flow(Integrator(restarted, credentials))
    later = restarted.invoke("DecisionLogFunction", {})
    history = DynamoHistoryStore(
        boto3.client("dynamodb"), restarted.stack.physical_ids["DecisionHistoryTable"], clock
    )
    assert (again["appended"], later["appended"]) == (0, 1)
    assert [record_id for record_id, _ in history.leaves(credentials.client_id, 3)] == [*before, after]
