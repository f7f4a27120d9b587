"""Connect over S3 on the local stack (ConnectTransport=s3, the template's default), as a client does
it: the operator onboards it with no SSH key and issues a file's URLs with the CLI; the client PUTs
the file with a plain HTTP client (httpx, then curl), waits for its results and GETs them, with no
AWS credentials of its own. moto's S3 answers the URLs as S3 would (it checks neither signature nor
expiry: those are AWS's, asserted on the URLs themselves in tests/integration)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from tests import http_collection
from tests.e2e.conftest import DevServer, start_dev_server

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e

LENA = "+12025550112"  # a Sandbox user whose Verified User check passes (docs/sandbox.md)


@dataclass
class S3Client:
    name: str  # the client name: file-name prefix and S3 prefix
    client_id: str
    enroll_key: str


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    # No PHONEID_CONNECT_TRANSPORT: the stack takes the template's default, as a deploy does
    server = start_dev_server(tmp_path_factory.mktemp("connect-s3"))
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture(scope="module")
def state(stack: DevServer) -> dict[str, Any]:
    return stack.state()


def _onboard(stack: DevServer, prefix: str) -> S3Client:
    client_id, name, enroll_key = stack.onboard_connect_client(prefix, {}, "--type", "verifiedUser")
    return S3Client(name, client_id, enroll_key)


def _batch_file(directory: Path, client: S3Client, stamp: str = "20260101120000") -> Path:
    path = directory / f"{client.name}_US_verifiedUser_{stamp}.csv"
    path.write_text(f"H,{client.enroll_key},verifiedUser\r\nD,{LENA},Lena,Ortiz,cust-1\r\nT,1\r\n", "utf-8")
    return path


def _urls(stack: DevServer, client: S3Client, file: Path, *options: str) -> dict[str, Any]:
    issued = stack.cli("connect", "upload-url", client.client_id, str(file), "--local", "--json", *options)
    assert issued.returncode == 0, issued.stderr
    urls: dict[str, Any] = json.loads(issued.stdout)
    return urls


def _wait_for_results(urls: dict[str, Any], timeout: float = 120) -> dict[str, httpx.Response]:
    """What a client does: GET the errors and the rejected file's URLs until one is there (the errors
    file is written after the output), then GET every result."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(httpx.get(urls["results"][kind]["url"]).status_code == 200 for kind in ("errors", "rejected")):
            return {kind: httpx.get(spec["url"]) for kind, spec in urls["results"].items()}
        time.sleep(0.5)  # waiting for the stack's workflow, not timing it
    raise AssertionError(f"no result for {urls['file_name']} within {timeout:g} s")


def test_the_default_transport_is_s3_and_no_sftp_server_runs(stack: DevServer, state: dict[str, Any]) -> None:
    assert state["connectTransport"] == "s3"
    assert state["environment"]["CONNECT_TRANSPORT"] == "s3"
    assert state["sftp"] is None
    output = stack.output()
    assert (
        "Connect (s3)   PUT each file to its URL: phoneid connect upload-url CLIENT_ID FILE --local" in output
    )
    assert "SFTP (Connect)" not in output


def test_a_client_puts_a_batch_to_its_url_and_gets_the_results_with_plain_http(
    stack: DevServer, state: dict[str, Any], tmp_path: Path
) -> None:
    # Given a client onboarded with no SSH key, the URLs the operator issues for a file of its, and
    # docs/http/connect.http with what those commands printed pasted in
    client = _onboard(stack, "acme")
    urls = _urls(stack, client, _batch_file(tmp_path, client, "20261123100000"), "--expires", "2h")
    collection = http_collection.load(
        ROOT / "docs" / "http" / "connect.http",
        {
            "KEY": client.enroll_key,
            "UPLOAD_URL": urls["upload"]["url"],
            "OUTPUT_URL": urls["results"]["output"]["url"],
            "ERRORS_URL": urls["results"]["errors"]["url"],
        },
    )

    # When the client sends the collection's requests with a plain HTTP client: the PUT of the
    # README's batch, then the GETs of its results once they are there
    with httpx.Client(timeout=30) as http:
        sent = http_collection.Run(collection, http_collection.sender(http)).all()
    (put, uploaded), (_, errors), (_, output) = sent

    # Then S3 took the file under the client's upload prefix, byte for byte, encrypted by the bucket's key
    assert [response.status_code for _, response in sent] == [200, 200, 200], uploaded.text
    assert urls["key"] == f"clients/{client.name}/upload/{urls['file_name']}"
    s3 = boto3.client("s3", endpoint_url=state["awsEndpointUrl"])
    stored = s3.get_object(Bucket=state["environment"]["CONNECT_BUCKET"], Key=urls["key"])
    assert stored["Body"].read() == put.body.encode()
    assert stored["ServerSideEncryption"] == "aws:kms"

    # And the batch ran the same workflow as an SFTP upload, with the README's results: Sam in the
    # error file, Lena passing and Hugo failing on 9135 in the output file, no rejection
    assert errors.text.splitlines()[1:-1] == ["D,,Sam,Park,cust-3,ERR_MISSING_PHONE"]
    rows = output.text.splitlines()
    assert (rows[0], rows[-1]) == ("H", "T,2")
    assert rows[1].startswith(f"D,{LENA},Lena,Ortiz,cust-1,")
    assert ",AL2," in rows[1]
    assert rows[2].startswith("D,+14045550135,Hugo,Code9135,cust-2,")
    assert "fail:9135" in rows[2]
    assert httpx.get(urls["results"]["rejected"]["url"]).status_code == 404
    status = stack.cli("connect", "status", urls["file_name"], "--local", "--json")
    assert json.loads(status.stdout)[0]["state"] == "delivered"

    # And the stack's console shows the batch done, its rows counted, and Hugo's 9135 in the day's chart
    feed = httpx.get(f"{stack.base_url}/_local/console/feed").json()
    (batch,) = [batch for batch in feed["batches"] if batch["file"] == urls["file_name"]]
    assert (batch["state"], batch["progress"]) == ("delivered", 1.0)
    assert (batch["rows"], batch["done"], batch["passed"], batch["failed"]) == (3, 3, 1, 2)
    assert feed["today"]["connect"]["byReason"].get("9135", 0) >= 1


@pytest.mark.skipif(not shutil.which("curl"), reason="needs curl")
def test_curl_uploads_and_downloads_as_the_docs_show(stack: DevServer, tmp_path: Path) -> None:
    # Given a client's file with a wrong Enroll Key, and its URLs in the CLI's text output
    client = _onboard(stack, "beta")
    batch = _batch_file(tmp_path, S3Client(client.name, client.client_id, "not-the-key"), "20260102120000")
    issued = stack.cli("connect", "upload-url", client.client_id, batch.name, "--local")
    assert issued.returncode == 0, issued.stderr
    [command] = [line.strip() for line in issued.stdout.splitlines() if line.strip().startswith("curl ")]

    # When the client runs the printed curl command next to its file
    uploaded = subprocess.run(  # noqa: S602 - the command the CLI prints for a shell, with a URL it made
        command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )

    # Then the file went in, and the rejected file comes back through its URL: curl fetches it
    assert uploaded.returncode == 0, uploaded.stderr
    urls = json.loads(
        stack.cli("connect", "download-url", client.client_id, batch.name, "--local", "--json").stdout
    )
    assert "upload" not in urls
    _wait_for_results(urls)
    rejected = tmp_path / urls["results"]["rejected"]["file_name"]
    fetched = subprocess.run(  # noqa: S603 - the stock tool, a URL the CLI made
        ["curl", "--fail", "-sS", "-o", str(rejected), urls["results"]["rejected"]["url"]],  # noqa: S607
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert fetched.returncode == 0, fetched.stderr
    assert "ENROLL_KEY_INVALID" in rejected.read_text("utf-8")


def test_ssh_keys_and_files_of_another_client_are_refused(stack: DevServer, tmp_path: Path) -> None:
    # Given an onboarded client, and an SSH public key file
    client = _onboard(stack, "gamma")
    key = tmp_path / "gamma.pub"
    key.write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl u@h\n")
    created = httpx.post(f"{stack.base_url}/_local/clients", json={}, timeout=30).json()["client_id"]

    # When the operator onboards another client with an SSH key, and asks URLs for another's file
    with_key = stack.cli(
        "connect", "onboard", created, "--name", "delta-e2e", "--type", "verifiedUser",
        "--ssh-key", str(key), "--local",
    )  # fmt: skip
    foreign = stack.cli(
        "connect", "upload-url", client.client_id, "acme_US_verifiedUser_20260101120000.csv", "--local"
    )
    shown = stack.cli("connect", "show", created, "--local")

    # Then both are one-line refusals, and the keyed client was not onboarded
    assert with_key.returncode == 2
    assert "transport is s3 (no SFTP server): onboard without --ssh-key" in with_key.stderr
    assert foreign.returncode == 2
    assert "is for client 'acme'" in foreign.stderr
    assert shown.returncode == 2
    assert "not onboarded" in shown.stderr
