"""Connect profiles on moto (ConnectProfilesTable as template.yaml declares it), the Transfer Family
calls of onboarding in AWS (moto's Transfer: create, describe and delete user, import SSH keys), and
the operator's CLI against a deployed stack of each transport."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from moto import mock_aws

from phoneid.adapters.dynamodb.clients import DynamoClientStore
from phoneid.adapters.dynamodb.connect_profiles import ClientNameTaken, DynamoConnectProfiles
from phoneid.adapters.transfer import SftpProvisioningFailed, TransferSftpUsers
from phoneid.domain.clients import Client, Solution
from phoneid.domain.connect import ConnectProfile
from phoneid.domain.credentials import verify_secret
from phoneid.services.connect_onboarding import ConnectOnboarding
from phoneid_cli.main import main
from phoneid_cli.targets import Context
from phoneid_dev import workflows
from phoneid_dev.template import template
from phoneid_dev.workflows import retry_waits
from tests.fakes import START, FakeClock
from tests.harness import Api

BUCKET = "phoneid-connect-test"
ROLE = "arn:aws:iam::123456789012:role/connect-sftp-user"


def _table(logical_id: str) -> str:
    props = template().of_type("AWS::DynamoDB::Table")[logical_id]
    name = f"test-{logical_id}"
    boto3.client("dynamodb").create_table(
        TableName=name,
        KeySchema=props["KeySchema"],
        AttributeDefinitions=props["AttributeDefinitions"],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


@pytest.fixture
def aws() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("dynamodb")


@pytest.fixture
def profiles(aws: Any) -> DynamoConnectProfiles:
    return DynamoConnectProfiles(aws, _table("ConnectProfilesTable"))


def _key(comment: str = "ops@acme") -> str:
    public = ed25519.Ed25519PrivateKey.generate().public_key()
    return f"{public.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()} {comment}"


def _profile(client_id: str = "client-1", name: str = "acme", **changes: Any) -> ConnectProfile:
    profile = ConnectProfile(
        client_id=client_id,
        client_name=name,
        types=frozenset({"verifiedUser", "humanAssurance"}),
        enroll_key_hash="scrypt$16384$8$1$salt$hash",
        emails=("ops@acme.example", "cfo@acme.example"),
        ssh_public_keys=(_key(),),
        created_at=datetime(2026, 11, 22, 12, 0, tzinfo=UTC),
    )
    return replace(profile, **changes)


def _items(aws: Any, table: str) -> dict[str, dict[str, Any]]:
    return {item["pk"]["S"]: item for item in aws.scan(TableName=table)["Items"]}


# --- the profiles store -------------------------------------------------------------------------


def test_a_profile_is_one_name_item_and_one_client_pointer(aws: Any, profiles: DynamoConnectProfiles) -> None:
    # Given a profile
    profile = _profile()

    # When it is stored
    profiles.put(profile)

    # Then the table holds the profile under its name and a pointer under its client id
    items = _items(aws, "test-ConnectProfilesTable")
    assert set(items) == {"name#acme", "client#client-1"}
    assert items["client#client-1"]["clientName"] == {"S": "acme"}
    stored = items["name#acme"]
    assert stored["clientId"] == {"S": "client-1"}
    assert stored["types"] == {"L": [{"S": "humanAssurance"}, {"S": "verifiedUser"}]}
    assert stored["enrollKeyHash"] == {"S": profile.enroll_key_hash}
    assert stored["createdAt"] == {"S": "2026-11-22T12:00:00+00:00"}
    # And both lookups give the same profile back
    assert profiles.get_by_name("acme") == profile
    assert profiles.get_by_client("client-1") == profile
    assert profiles.get_by_name("other") is None
    assert profiles.get_by_client("client-2") is None


def test_a_name_held_by_another_client_is_refused_and_nothing_written(
    aws: Any, profiles: DynamoConnectProfiles
) -> None:
    # Given acme held by client-1
    profiles.put(_profile())
    before = _items(aws, "test-ConnectProfilesTable")

    # When client-2 asks for acme
    with pytest.raises(ClientNameTaken, match="belongs to another client"):
        profiles.put(_profile("client-2", "acme"))

    # Then the table is as it was: no pointer for client-2, acme still client-1's
    assert _items(aws, "test-ConnectProfilesTable") == before
    assert isinstance(ClientNameTaken("x"), ValueError)  # the port's contract


def test_a_replaced_profile_keeps_its_name_and_a_rename_frees_the_old_one(
    aws: Any, profiles: DynamoConnectProfiles
) -> None:
    # Given acme of client-1
    profiles.put(_profile())

    # When its key hash is replaced, then it is renamed acme-corp
    profiles.put(_profile(enroll_key_hash="scrypt$16384$8$1$salt$other"))
    assert profiles.get_by_name("acme") is not None
    profiles.put(_profile(name="acme-corp"))

    # Then only the new name and the pointer remain; another client may take acme
    assert set(_items(aws, "test-ConnectProfilesTable")) == {"name#acme-corp", "client#client-1"}
    taken = _profile("client-2", "acme")
    profiles.put(taken)
    assert profiles.get_by_name("acme") == taken
    renamed = profiles.get_by_client("client-1")
    assert renamed is not None
    assert renamed.client_name == "acme-corp"


def test_delete_removes_both_items(aws: Any, profiles: DynamoConnectProfiles) -> None:
    profiles.put(_profile())
    profiles.put(_profile("client-2", "other"))

    assert profiles.delete("client-1") is True
    assert profiles.delete("client-1") is False

    assert set(_items(aws, "test-ConnectProfilesTable")) == {"name#other", "client#client-2"}
    assert profiles.get_by_client("client-1") is None


# --- onboarding on DynamoDB and Transfer Family ------------------------------------------------


@pytest.fixture
def transfer(aws: Any) -> tuple[Any, str]:
    client = boto3.client("transfer")
    server_id = client.create_server(
        Domain="S3", Protocols=["SFTP"], IdentityProviderType="SERVICE_MANAGED", EndpointType="PUBLIC"
    )["ServerId"]
    return client, server_id


@pytest.fixture
def onboarding(aws: Any, profiles: DynamoConnectProfiles, transfer: tuple[Any, str]) -> ConnectOnboarding:
    clients = DynamoClientStore(aws, _table("ClientsTable"))
    clients.put(
        Client(
            client_id="client-1",
            tier="production",
            region="US",
            solution=Solution.VERIFIED_USER,
            secret_hash="scrypt$16384$8$1$salt$hash",
            created_at=START,
        )
    )
    client, server_id = transfer
    return ConnectOnboarding(
        profiles, clients, FakeClock(), transfer=TransferSftpUsers(client, server_id, ROLE, BUCKET)
    )


def test_onboarding_in_aws_creates_the_transfer_user_with_a_logical_home(
    onboarding: ConnectOnboarding, profiles: DynamoConnectProfiles, transfer: tuple[Any, str]
) -> None:
    # Given a client and two SSH keys
    keys = [_key("laptop"), _key("ci")]

    # When it is onboarded against a deployed stack
    profile, enroll_key = onboarding.onboard("client-1", "acme", ["verifiedUser"], keys, ["ops@acme.example"])

    # Then the profile is stored with only the key's hash
    stored = profiles.get_by_client("client-1")
    assert stored is not None
    assert stored == profile
    assert verify_secret(enroll_key, stored.enroll_key_hash)
    # And the Transfer Family user sees exactly /upload and /download of its own prefix
    client, server_id = transfer
    user = client.describe_user(ServerId=server_id, UserName="acme")["User"]
    assert user["Role"] == ROLE
    assert user["HomeDirectoryType"] == "LOGICAL"
    assert user["HomeDirectoryMappings"] == [
        {"Entry": "/upload", "Target": f"/{BUCKET}/clients/acme/upload", "Type": "DIRECTORY"},
        {"Entry": "/download", "Target": f"/{BUCKET}/clients/acme/download", "Type": "DIRECTORY"},
    ]
    assert [k["SshPublicKeyBody"] for k in user["SshPublicKeys"]] == keys
    # And its session policy narrows the role to the user's own prefix, puts only into upload/
    policy = json.loads(user["Policy"])
    puts = [s for s in policy["Statement"] if "s3:PutObject" in s["Action"]]
    assert [s["Resource"] for s in puts] == [f"arn:aws:s3:::{BUCKET}/clients/${{transfer:UserName}}/upload/*"]
    assert all("s3:DeleteObject" not in s["Action"] for s in policy["Statement"])


def test_remove_in_aws_deletes_the_transfer_user(
    onboarding: ConnectOnboarding, profiles: DynamoConnectProfiles, transfer: tuple[Any, str]
) -> None:
    # Given an onboarded client
    onboarding.onboard("client-1", "acme", ["verifiedUser"], [_key()])
    client, server_id = transfer

    # When it is removed
    onboarding.remove("client-1")

    # Then the user and the profile are gone
    with pytest.raises(client.exceptions.ClientError):
        client.describe_user(ServerId=server_id, UserName="acme")
    assert profiles.get_by_client("client-1") is None
    assert TransferSftpUsers(client, server_id, ROLE, BUCKET).delete("acme") is False


def test_a_transfer_failure_leaves_no_profile(aws: Any, profiles: DynamoConnectProfiles) -> None:
    # Given a Transfer server id that does not exist
    clients = DynamoClientStore(aws, _table("ClientsTable"))
    clients.put(
        Client(
            client_id="client-1",
            tier="production",
            region="US",
            solution=Solution.VERIFIED_USER,
            secret_hash="scrypt$16384$8$1$salt$hash",
            created_at=START,
        )
    )
    users = TransferSftpUsers(boto3.client("transfer"), "s-00000000000000000", ROLE, BUCKET)
    onboarding = ConnectOnboarding(profiles, clients, FakeClock(), transfer=users)

    # When a client is onboarded
    with pytest.raises(SftpProvisioningFailed, match="could not create the SFTP user"):
        onboarding.onboard("client-1", "acme", ["verifiedUser"], [_key()])

    # Then no profile was left behind
    assert profiles.get_by_client("client-1") is None
    assert profiles.get_by_name("acme") is None


# --- the CLI against a deployed stack --------------------------------------------------------------


@dataclass
class DeployedOnMoto:
    """A deployed stack as CloudFormation would describe it: here provisioned on moto."""

    api: Api
    stack_outputs: dict[str, str] | None = None

    def environment(self, stack_name: str) -> dict[str, str]:
        return self.api.stack.environment()

    def outputs(self, stack_name: str) -> dict[str, str]:
        if self.stack_outputs is None:
            raise AssertionError("an s3 stack has no SFTP server to read")
        return self.stack_outputs

    def cli(self, *argv: str) -> int:
        return main(list(argv), Context(stacks=self))


def test_the_cli_onboards_and_removes_with_the_stacks_transfer_server(
    make_api: Callable[..., Api],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a deployed stack (here: provisioned on moto) with its SFTP server and outputs
    api = make_api(tier="production", parameters={"ConnectTransport": "sftp"})
    client_id = api.create_client(solution=Solution.VERIFIED_USER).client_id
    transfer = boto3.client("transfer")
    server_id = transfer.create_server(IdentityProviderType="SERVICE_MANAGED", Protocols=["SFTP"])["ServerId"]
    outputs = {
        "ConnectSftpServerId": server_id,
        "ConnectSftpUserRoleArn": ROLE,
        "ConnectSftpEndpoint": f"{server_id}.server.transfer.us-east-1.amazonaws.com",
    }
    deployed = DeployedOnMoto(api, outputs)
    key_file = tmp_path / "acme.pub"
    key_file.write_text(_key() + "\n")

    # When the operator onboards the client with --stack, then removes it
    onboarded = deployed.cli(
        "connect", "onboard", client_id, "--name", "acme", "--type", "verifiedUser", "--ssh-key",
        str(key_file), "--email", "ops@acme.example", "--stack", "phoneid-prod", "--json"
    )  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    user = transfer.describe_user(ServerId=server_id, UserName="acme")["User"]
    stored_items = json.dumps(api.table_items("ConnectProfilesTable"))
    removed = deployed.cli("connect", "remove", client_id, "--stack", "phoneid-prod")

    # Then the Transfer user existed with the stack's bucket in its home, the key was printed once,
    # and removing took the user and the profile away
    assert onboarded == 0
    assert printed["sftp"] == f"sftp acme@{outputs['ConnectSftpEndpoint']}"
    bucket = api.stack.physical_ids["ConnectBucket"]
    assert user["HomeDirectoryMappings"][0]["Target"] == f"/{bucket}/clients/acme/upload"
    assert [k["SshPublicKeyBody"] for k in user["SshPublicKeys"]] == [key_file.read_text().strip()]
    assert printed["enroll_key"] not in stored_items
    assert '"enrollKeyHash": {"S": "scrypt$' in stored_items
    assert removed == 0
    with pytest.raises(transfer.exceptions.ClientError):
        transfer.describe_user(ServerId=server_id, UserName="acme")
    assert api.container.connect_profiles.get_by_client(client_id) is None


def test_the_cli_on_an_s3_stack_onboards_without_sftp_and_issues_urls_that_run_a_batch(
    make_api: Callable[..., Api],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a deployed stack of the default transport (s3: no SFTP server, no SFTP outputs)
    monkeypatch.setattr(retry_waits, "retry_delay_scale", 0.0)
    api = make_api(tier="production")
    client_id = api.create_client(solution=Solution.VERIFIED_USER).client_id
    deployed = DeployedOnMoto(api)  # its outputs name no SFTP server
    bucket = api.stack.physical_ids["ConnectBucket"]
    name = "acme_US_verifiedUser_20260101120000.csv"

    # When the operator onboards the client (no SSH key) and asks for a file's URLs, valid 2 hours
    onboarded = deployed.cli(
        "connect", "onboard", client_id, "--name", "acme", "--type", "verifiedUser",
        "--stack", "prod", "--json",
    )  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    issued = deployed.cli(
        "connect", "upload-url", client_id, name, "--expires", "2h", "--stack", "prod", "--json"
    )
    out, err = capsys.readouterr()
    urls = json.loads(out)

    # Then the client has a profile and no login, and the URLs are SigV4, valid 2 hours, signing only
    # the host: one PUT of the file's key under its upload prefix in the stack's bucket
    assert (onboarded, issued) == (0, 0)
    assert printed["transport"] == "s3"
    assert "sftp" not in printed
    assert "ssh_keys" not in printed
    assert urls["key"] == f"clients/acme/upload/{name}"
    put = urlsplit(urls["upload"]["url"])
    query = parse_qs(put.query)
    assert (put.scheme, put.hostname, put.path) == ("https", f"{bucket}.s3.amazonaws.com", f"/{urls['key']}")
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["X-Amz-Expires"] == ["7200"]
    assert query["X-Amz-SignedHeaders"] == ["host"]
    # And signed with session credentials, the operator is told the URLs end with the session
    assert "stop working when that session ends" in err

    # When the client PUTs a batch file to its URL with a plain HTTP client (moto answers `requests`)
    enroll_key = printed["enroll_key"]
    body = f"H,{enroll_key},verifiedUser\r\nD,+12025550112,Lena,Ortiz,cust-1\r\nT,1\r\n".encode()
    assert requests.put(urls["upload"]["url"], data=body, timeout=30).status_code == 200
    workflows.wait(api.stack.physical_ids["ConnectStateMachine"], timeout=60, at_least=1)

    # Then the file is stored under the bucket's own key, the batch ran, and the results' URLs give
    # the output and error files; the rejected one does not exist
    stored = boto3.client("s3").head_object(Bucket=bucket, Key=urls["key"])
    assert stored["ServerSideEncryption"] == "aws:kms"
    results = {kind: requests.get(spec["url"], timeout=30) for kind, spec in urls["results"].items()}
    assert results["output"].status_code == 200
    assert results["output"].text.startswith("H\r\nD,+12025550112,Lena,Ortiz,cust-1")
    assert results["errors"].text == "H,verifiedUser\r\nT,0\r\n"
    assert results["rejected"].status_code == 404


@pytest.mark.parametrize("transport", ["sftp", "none"])
def test_only_an_s3_stack_issues_urls(
    transport: str,
    make_api: Callable[..., Api],
    capsys: pytest.CaptureFixture[str],
) -> None:
    api = make_api(parameters={"ConnectTransport": transport})
    client_id = api.create_client(solution=Solution.VERIFIED_USER).client_id
    refused = DeployedOnMoto(api).cli(
        "connect", "upload-url", client_id, "acme_US_verifiedUser_20260101120000.csv", "--stack", "x"
    )

    assert refused == 2
    assert f"Connect transport is {transport}" in capsys.readouterr().err
