"""Connect over SFTP on the local stack (ConnectTransport=sftp), as a client does it: onboard with the
CLI, then the stock OpenSSH `sftp` client puts a batch file into /upload and lists /download, and
cannot go anywhere else; `phoneid connect submit` does the round trip in one command."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.e2e.conftest import BIN, DevServer, start_dev_server

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not shutil.which("sftp") or not shutil.which("ssh-keygen"), reason="needs OpenSSH"),
]


@dataclass
class SftpClient:
    name: str  # the client name: SFTP user and file-name prefix
    client_id: str
    key: Path  # private key; its .pub was onboarded
    enroll_key: str


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    server = start_dev_server(
        tmp_path_factory.mktemp("connect-sftp"), PHONEID_CONNECT_TRANSPORT="sftp", PHONEID_SFTP_PORT="0"
    )
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture(scope="module")
def state(stack: DevServer) -> dict[str, Any]:
    return stack.state()


def _new_key(directory: Path, name: str) -> Path:
    key = directory / name
    subprocess.run(  # noqa: S603 - the stock tool, fixed arguments
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{name}@e2e", "-f", str(key)],  # noqa: S607
        check=True,
        capture_output=True,
    )
    return key


def _onboard(stack: DevServer, directory: Path, prefix: str) -> SftpClient:
    key = _new_key(directory, f"{prefix}-{uuid.uuid4().hex[:8]}")
    types = ("--type", "verifiedUser,humanAssurance")
    client_id, name, enroll_key = stack.onboard_connect_client(
        prefix, {"solution": "verified-user"}, *types, "--ssh-key", f"{key}.pub"
    )
    return SftpClient(name, client_id, key, enroll_key)


# Host keys are not pinned (a new stack, a new key); only the key given is offered.
SFTP_OPTIONS = (
    "StrictHostKeyChecking=no",
    "UserKnownHostsFile=/dev/null",
    "IdentitiesOnly=yes",
    "LogLevel=ERROR",
)


def sftp(state: dict[str, Any], user: str, key: Path, commands: str) -> subprocess.CompletedProcess[str]:
    """The stock OpenSSH client in batch mode (`-b -`: a failing command ends it with exit code 1)."""
    options = [part for option in SFTP_OPTIONS for part in ("-o", option)]
    port = str(state["sftp"]["port"])
    command = ["sftp", "-b", "-", "-i", str(key), "-P", port, *options, f"{user}@{state['sftp']['host']}"]
    return subprocess.run(  # noqa: S603 - the stock tool, fixed options
        command, input=commands, capture_output=True, text=True, timeout=60, check=False
    )


def _batch_file(directory: Path, client: SftpClient) -> Path:
    path = directory / f"{client.name}_US_verifiedUser_20260101120000.csv"
    path.write_text(
        f"H,{client.enroll_key},verifiedUser\r\nD,+12025550111,Kira,Petrova,cust-1\r\nT,1\r\n", "utf-8"
    )
    return path


@pytest.fixture(scope="module")
def clients(stack: DevServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[SftpClient, SftpClient]:
    directory = tmp_path_factory.mktemp("keys")
    return _onboard(stack, directory, "acme"), _onboard(stack, directory, "beta")


def test_the_banner_and_state_name_the_sftp_server(stack: DevServer, state: dict[str, Any]) -> None:
    assert state["connectTransport"] == "sftp"
    assert state["sftp"]["host"] == "127.0.0.1"
    assert state["sftp"]["port"] > 0
    assert f"SFTP (Connect) sftp -P {state['sftp']['port']} CLIENT_NAME@127.0.0.1" in stack.output()


def test_a_client_puts_a_file_into_upload_and_lists_its_directories(
    state: dict[str, Any], clients: tuple[SftpClient, SftpClient], tmp_path: Path
) -> None:
    # Given an onboarded client and a batch file
    acme, _ = clients
    batch = _batch_file(tmp_path, acme)

    # When it connects with its key, looks around, puts the file and lists both directories
    session = sftp(
        state,
        acme.name,
        acme.key,
        f"pwd\nls /\nput {batch} /upload/{batch.name}\nls -l /upload\nls /download\ncd /upload\nls\n",
    )

    # Then the session succeeds: the root holds only upload and download, and the file is in /upload
    assert session.returncode == 0, session.stderr
    out = session.stdout
    assert "Remote working directory: /" in out
    root_listing = out.split("sftp> ls /\n", 1)[1].split("sftp>", 1)[0].split()
    assert root_listing == ["/download", "/upload"]
    upload_listing = out.split("sftp> ls -l /upload\n", 1)[1].split("sftp>", 1)[0]
    assert batch.name in upload_listing
    assert str(batch.stat().st_size) in upload_listing
    # And the object is in the Connect bucket under the client's upload prefix, byte for byte
    s3 = boto3.client("s3", endpoint_url=state["awsEndpointUrl"])
    stored = s3.get_object(Bucket=state["sftp"]["bucket"], Key=f"clients/{acme.name}/upload/{batch.name}")
    assert stored["Body"].read() == batch.read_bytes()


def test_another_client_cannot_see_the_file(
    state: dict[str, Any], clients: tuple[SftpClient, SftpClient], tmp_path: Path
) -> None:
    # Given acme's file in its upload directory
    acme, beta = clients
    batch = _batch_file(tmp_path, acme)
    put = sftp(state, acme.name, acme.key, f"put {batch} /upload/{batch.name}\n")
    assert put.returncode == 0, put.stderr

    # When beta lists its directories and tries to reach acme's file
    listing = sftp(state, beta.name, beta.key, "ls /upload\nls /download\n")
    direct = sftp(state, beta.name, beta.key, f"get /upload/{batch.name} {tmp_path / 'stolen.csv'}\n")
    climbing = sftp(
        state, beta.name, beta.key, f"get ../../{acme.name}/upload/{batch.name} {tmp_path / 'stolen.csv'}\n"
    )
    prefix = sftp(state, beta.name, beta.key, f"ls /clients/{acme.name}/upload\n")

    # Then beta sees nothing of acme's, and every attempt fails
    assert listing.returncode == 0, listing.stderr
    assert batch.name not in listing.stdout
    assert direct.returncode != 0
    assert "not found" in direct.stderr
    assert climbing.returncode != 0
    assert prefix.returncode != 0
    assert not (tmp_path / "stolen.csv").exists()


def test_a_client_logs_in_only_with_its_own_key(
    state: dict[str, Any], clients: tuple[SftpClient, SftpClient]
) -> None:
    acme, beta = clients

    with_beta_key = sftp(state, acme.name, beta.key, "ls\n")
    unknown_user = sftp(state, "nobody-here", acme.key, "ls\n")

    assert with_beta_key.returncode == 255
    assert "Permission denied (publickey)" in with_beta_key.stderr
    assert unknown_user.returncode == 255


@pytest.mark.parametrize(
    ("command", "refusal"),
    [
        ("put {file} /download/{name}", "Permission denied"),
        ("put {file} /{name}", "No such file"),
        ("put {file} /upload/../../{name}", "No such file"),
        ("put {file} /upload/sub/{name}", "No such file"),
        ("mkdir /upload/sub", "Permission denied"),
        ("rename /upload/{name} /upload/renamed.csv", "Permission denied"),
        ("rm /upload/{name}", "Permission denied"),
        ("symlink /upload/{name} /upload/link.csv", "Permission denied"),
        ("ls /etc", "not found"),
    ],
)
def test_writing_outside_upload_and_changing_files_is_refused(
    state: dict[str, Any], clients: tuple[SftpClient, SftpClient], tmp_path: Path, command: str, refusal: str
) -> None:
    # Given acme's file in /upload
    acme, _ = clients
    batch = _batch_file(tmp_path, acme)
    assert sftp(state, acme.name, acme.key, f"put {batch} /upload/{batch.name}\n").returncode == 0

    # When it tries to write elsewhere, or to change what is there
    session = sftp(state, acme.name, acme.key, command.format(file=batch, name=batch.name) + "\n")

    # Then the server refuses, and the bucket holds only what /upload took
    assert session.returncode == 1, session.stdout
    assert refusal in session.stderr
    s3 = boto3.client("s3", endpoint_url=state["awsEndpointUrl"])
    keys = [
        o["Key"] for o in s3.list_objects_v2(Bucket=state["sftp"]["bucket"], Prefix="clients/")["Contents"]
    ]
    assert all(key.startswith(("clients/acme-", "clients/beta-")) for key in keys)
    assert not [key for key in keys if "/upload/" in key and not key.endswith(".csv")]
    assert not [key for key in keys if key.endswith(("renamed.csv", "link.csv"))]
    assert f"clients/{acme.name}/download/{batch.name}" not in keys


def test_show_rotate_and_remove(stack: DevServer, state: dict[str, Any], tmp_path: Path) -> None:
    # Given a client onboarded for this test
    client = _onboard(stack, tmp_path, "gone")

    # When the operator shows it, rotates its key, then removes it
    shown = stack.cli("connect", "show", client.client_id, "--local", "--json")
    rotated = stack.cli("connect", "rotate-key", client.client_id, "--local", "--json")
    removed = stack.cli("connect", "remove", client.client_id, "--local")
    again = stack.cli("connect", "show", client.client_id, "--local")

    # Then show never prints a key, rotation prints a new one, and after removal the login is refused
    assert shown.returncode == 0, shown.stderr
    assert client.enroll_key not in shown.stdout
    profile = json.loads(shown.stdout)
    assert profile["client_name"] == client.name
    assert profile["types"] == ["humanAssurance", "verifiedUser"]
    assert profile["sftp"] == f"sftp -P {state['sftp']['port']} {client.name}@127.0.0.1"
    assert rotated.returncode == 0, rotated.stderr
    assert json.loads(rotated.stdout)["enroll_key"] not in ("", client.enroll_key)
    assert removed.returncode == 0, removed.stderr
    assert again.returncode == 2
    assert "not onboarded" in again.stderr
    assert sftp(state, client.name, client.key, "ls\n").returncode == 255


def test_onboarding_mistakes_are_one_line_errors(stack: DevServer, tmp_path: Path) -> None:
    key = _new_key(tmp_path, "mistakes")

    bad_name = stack.cli(
        "connect", "onboard", "no-such-client", "--name", "Bad_Name", "--type", "verifiedUser",
        "--ssh-key", f"{key}.pub", "--local",
    )  # fmt: skip
    private_key = stack.cli(
        "connect", "onboard", "no-such-client", "--name", "okname", "--type", "verifiedUser",
        "--ssh-key", str(key), "--local",
    )  # fmt: skip

    assert bad_name.returncode == 2
    assert bad_name.stderr.startswith("phoneid: client name 'Bad_Name'")
    assert private_key.returncode == 2
    assert "is a private key" in private_key.stderr
    assert "BEGIN" not in private_key.stderr


def test_submit_puts_the_file_waits_and_downloads_the_results_beside_it(
    stack: DevServer, clients: tuple[SftpClient, SftpClient], tmp_path: Path
) -> None:
    # Given a batch file of an onboarded client, named as the rule says
    acme, _ = clients
    batch = _batch_file(tmp_path, acme)

    # When the operator submits it to the local stack, then asks for its status
    submitted = stack.cli("connect", "submit", str(batch), "--local", "--timeout", "120")
    status = stack.cli("connect", "status", batch.name, "--local", "--json")

    # Then the batch ran to its end and the results lie next to the input
    assert submitted.returncode == 0, submitted.stderr
    assert f"{batch.name}: uploaded to s3://" in submitted.stderr
    assert "delivered" in submitted.stderr
    output = batch.with_name(f"{batch.stem}_output.csv")
    assert f"wrote {output}" in submitted.stdout
    assert output.read_text("utf-8").startswith("H")
    assert status.returncode == 0, status.stderr
    batches = json.loads(status.stdout)
    assert batches[0]["file_name"] == batch.name
    assert batches[0]["state"] == "delivered"


def test_submit_refuses_a_file_of_no_onboarded_client(stack: DevServer, tmp_path: Path) -> None:
    stray = tmp_path / "nobody_US_verifiedUser_20260101120000.csv"
    stray.write_text("H,key,verifiedUser\nT,0\n")

    submitted = stack.cli("connect", "submit", str(stray), "--local")

    assert submitted.returncode == 2
    assert "no Connect client named 'nobody'" in submitted.stderr


def _worker_peaks(server_pid: int, function: str) -> list[int]:
    """Peak RSS (VmHWM, bytes) of each of the stack's worker processes of ``function``."""
    peaks = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            argv = (status.parent / "cmdline").read_bytes().split(b"\0")
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue  # a process that ended meanwhile
        if (
            b"phoneid_dev.processes" in argv
            and function.encode() in argv
            and int(fields["PPid"]) == server_pid
        ):
            peaks.append(int(fields["VmHWM"].split()[0]) * 1024)
    return peaks


def test_a_160_mib_line_is_its_rows_error_and_the_batch_is_delivered(
    stack: DevServer, clients: tuple[SftpClient, SftpClient], tmp_path: Path
) -> None:
    # Given a file whose second row has a last name of 160 MiB on one line (written in 1 MiB
    # blocks: never held whole here either)
    acme, _ = clients
    path = tmp_path / f"{acme.name}_US_verifiedUser_20260101130000.csv"
    block = b"x" * (1 << 20)
    with path.open("wb") as out:
        out.write(f"H,{acme.enroll_key},verifiedUser\r\nD,+12025550111,Kira,Petrova,cust-1\r\n".encode())
        out.write(b"D,+12025550112,Lena,")
        for _ in range(160):
            out.write(block)
        out.write(b",cust-2\r\nT,2\r\n")
    assert path.stat().st_size > 160 * (1 << 20)

    # When it is submitted to the local stack (put as SFTP would, then waited for)
    submitted = subprocess.run(  # noqa: S603 - our own CLI
        [str(BIN / "phoneid"), "connect", "submit", str(path), "--local", "--timeout", "600"],
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=660,
        check=False,
    )

    # Then the batch ran to its end within the step's timeout: the long row is its error, the other
    # row was verified
    assert submitted.returncode == 0, submitted.stderr
    output = path.with_name(f"{path.stem}_output.csv").read_text("utf-8").splitlines()
    errors = path.with_name(f"{path.stem}_errors.csv").read_text("utf-8").splitlines()
    assert [line.split(",")[1] for line in output[1:-1]] == ["+12025550111"]
    [error] = errors[1:-1]
    cells = error.split(",")
    assert (cells[1], cells[4], cells[5]) == ("+12025550112", "cust-2", "ERR_FIELD_TOO_LONG")
    assert len(cells[3]) == 131_072  # the cell as kept: cut to the limit
    # And validation read the line without holding it: its worker's peak memory stays far below
    # its own ~110 MiB plus the 160 MiB line (held once, as text, the line alone is 160 MiB)
    peaks = _worker_peaks(stack.process.pid, "ConnectValidateFunction")
    assert peaks
    print(f"validate worker peak RSS: {max(peaks) / (1 << 20):.0f} MiB")
    assert max(peaks) < 200 * (1 << 20)
