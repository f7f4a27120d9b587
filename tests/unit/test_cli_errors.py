"""Every `phoneid` failure is one line on stderr, `phoneid: what went wrong: what to do`, and exit code
2 (the command line asks for something wrong) or 1 (something the command needs failed); never a
traceback, unless PHONEID_DEBUG=1 asks for one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError
from botocore.stub import Stubber

from phoneid.config import Settings
from phoneid.domain.errors import InternalError
from phoneid_cli.adapters.cloudformation import CloudFormationStacks
from phoneid_cli.errors import explain
from phoneid_cli.main import main
from phoneid_cli.targets import Context
from tests.unit.helpers import identity_record

BIN = Path(sys.executable).parent


def one_line(err: str) -> str:
    """The single line a failure prints (asserting there is exactly one)."""
    assert err.startswith("phoneid: "), err
    assert err.count("\n") == 1, err
    assert err.endswith("\n"), err
    assert "Traceback" not in err
    return err.removeprefix("phoneid: ").rstrip("\n")


@pytest.fixture
def no_local_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The state file of a local stack, not written: none was started here."""
    from phoneid_dev import server

    state_file = tmp_path / "dev.json"
    monkeypatch.setattr(server, "STATE_FILE", state_file)
    return state_file


def test_a_missing_file_is_named(
    no_local_stack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given no such file
    missing = tmp_path / "nope.jsonl"

    # When the operator imports it into the local stack
    code = main(["identities", "import", str(missing), "--local"])

    # Then the file is named before any stack is looked for: a usage error
    assert code == 2
    assert one_line(capsys.readouterr().err) == f"{missing}: no such file: check the path"


def test_a_command_without_a_stack_says_to_name_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a valid file and an environment without the stack's settings
    for name in Settings.variable_names():
        monkeypatch.delenv(name, raising=False)
    people = tmp_path / "people.jsonl"
    people.write_text(json.dumps(identity_record()) + "\n")

    # When imported with neither --local nor --stack
    code = main(["identities", "import", str(people)])

    # Then one line says what the command needs, not pydantic's list of missing fields
    assert code == 2
    said = one_line(capsys.readouterr().err)
    assert said.startswith(
        "identities import needs a stack: add --local (the running local stack) or --stack NAME "
        "(a deployed one), or set the stack's environment ("
    )
    assert "PHONEID_TIER" in said
    assert "Field required" not in said


def test_no_local_stack_says_how_to_start_one(
    no_local_stack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given no local stack started here
    # When the operator lists its clients
    code = main(["clients", "list", "--local"])

    # Then it says to start one
    assert code == 1
    assert one_line(capsys.readouterr().err) == (
        "no local stack is running: start it with make dev or phoneid dev"
    )


def test_a_short_seeded_secret_at_dev_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given `phoneid dev` refusing the seeded client (what ClientAdmin says of a short secret)
    from phoneid.services.clients import InvalidClientSpec
    from phoneid_dev import server

    def refuse(**_: Any) -> None:
        raise InvalidClientSpec("a client secret must have at least 32 characters")

    monkeypatch.setattr(server, "serve", refuse)

    # When the user starts the stack
    code = main(["dev"])

    # Then the variable to fix is named, with what to do
    assert code == 2
    assert one_line(capsys.readouterr().err) == (
        "PHONEID_CLIENT_SECRET: a client secret must have at least 32 characters: set a longer one, "
        "or unset PHONEID_CLIENT_ID and PHONEID_CLIENT_SECRET to have credentials made up"
    )


def test_an_unknown_connect_transport_at_dev_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a misspelt transport in the environment (the stack would not start: nothing is served)
    from phoneid_dev import server

    monkeypatch.setenv("PHONEID_CONNECT_TRANSPORT", "ftp")
    monkeypatch.setattr(server, "serve", lambda **_: pytest.fail("the stack must not start"))

    # When the user starts the stack
    code = main(["dev"])

    # Then the variable is named, with its choices
    assert code == 2
    assert one_line(capsys.readouterr().err) == (
        "PHONEID_CONNECT_TRANSPORT='ftp': use s3, sftp or none (or unset it)"
    )


def test_a_reader_that_stops_early_ends_the_output_quietly() -> None:
    # Given a pipe whose reader is already gone (as `| head` once it has its lines)
    read_end, write_end = os.pipe()
    os.close(read_end)

    # When the Sandbox users are printed into it
    try:
        done = subprocess.run(  # noqa: S603 - our own CLI
            [str(BIN / "phoneid"), "sandbox", "users"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)

    # Then it stops without a word, with exit code 1 (what Python gives on EPIPE)
    assert done.stderr == ""
    assert done.returncode == 1


def _cloudformation(client: Any) -> Context:
    """The CLI's context, its deployed stacks described by ``client``."""
    return Context(stacks=CloudFormationStacks(client))


def test_a_stack_aws_does_not_know_says_to_check_its_name(capsys: pytest.CaptureFixture[str]) -> None:
    # Given CloudFormation knowing no stack of that name
    client = boto3.client("cloudformation", region_name="us-east-1")
    stubber = Stubber(client)
    stubber.add_client_error(
        "describe_stacks",
        service_error_code="ValidationError",
        service_message="Stack with id phoneid-typo does not exist",
        http_status_code=400,
    )
    stubber.activate()

    # When the operator lists its clients
    code = main(["clients", "list", "--stack", "phoneid-typo"], _cloudformation(client))

    # Then AWS's answer is quoted with what to check
    assert code == 1
    assert one_line(capsys.readouterr().err) == (
        "AWS DescribeStacks failed (ValidationError: Stack with id phoneid-typo does not exist): "
        "check the stack name (--stack) and the region (AWS_REGION)"
    )


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            NoCredentialsError(),
            "no AWS credentials: configure them (aws configure, AWS_PROFILE or AWS_ACCESS_KEY_ID), "
            "or use --local for the local stack",
        ),
        (
            EndpointConnectionError(endpoint_url="https://cloudformation.eu-west-1.amazonaws.com/"),
            "cannot reach AWS at https://cloudformation.eu-west-1.amazonaws.com/: check the network "
            "and the region (AWS_REGION)",
        ),
        (
            ClientError(
                {"Error": {"Code": "AccessDenied", "Message": "not authorized to perform DescribeStacks"}},
                "DescribeStacks",
            ),
            "AWS DescribeStacks failed (AccessDenied: not authorized to perform DescribeStacks): "
            "use credentials allowed to do this (an operator role of the stack's account)",
        ),
    ],
)
def test_aws_failures_say_what_to_check(
    error: Exception, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given CloudFormation failing so
    class Failing:
        def describe_stacks(self, **_: Any) -> Any:
            raise error

    # When the operator lists a deployed stack's clients
    code = main(["clients", "list", "--stack", "phoneid-prod"], _cloudformation(Failing()))

    # Then one line says what failed and what to check
    assert code == 1
    assert one_line(capsys.readouterr().err) == said


def test_a_domain_error_is_explained_by_the_aws_error_beneath_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the local stack's moto gone, as an adapter reports it (an internal error from the AWS one)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4599")
    try:
        try:
            raise EndpointConnectionError(endpoint_url="http://127.0.0.1:4599/")
        except EndpointConnectionError as cause:
            raise InternalError("Internal error during listing; retry the request") from cause
    except InternalError as error:
        failure = error

    # When explained
    # Then it is the unreachable local AWS that is said, not "retry the request"
    assert explain(failure) == (
        1,
        "cannot reach the local stack's AWS at http://127.0.0.1:4599/: is the stack still running? "
        "(start it with make dev or phoneid dev)",
    )


def test_the_targeted_local_stacks_aws_unreachable_is_said_as_the_local_stacks() -> None:
    # Given a command that targeted a local stack (its endpoint is not in this shell's environment)
    # whose moto is gone
    failure = EndpointConnectionError(endpoint_url="http://127.0.0.1:4599/")

    # When explained
    # Then it is the local stack that is said to be unreachable
    assert explain(failure, local_aws="http://127.0.0.1:4599") == (
        1,
        "cannot reach the local stack's AWS at http://127.0.0.1:4599/: is the stack still running? "
        "(start it with make dev or phoneid dev)",
    )


def test_a_usage_error_is_one_line_with_exit_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    # When --local is given a file name (it takes a port or URL)
    with pytest.raises(SystemExit) as exited:
        main(["clients", "list", "--local", "people.csv"])

    # Then argparse's exit code, and one line saying where the file goes
    assert exited.value.code == 2
    said = one_line(capsys.readouterr().err)
    assert said.startswith(
        "clients list: argument --local: 'people.csv' is not a port or URL of a local stack"
    )
    assert "a file name goes before --local" in said


def test_an_unexpected_error_is_one_line_naming_its_type(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a command failing in a way nobody foresaw
    from phoneid.domain.sandbox import Catalogue

    def broken(*_: Any) -> Any:
        raise RuntimeError("catalogue unreadable")

    monkeypatch.setattr(Catalogue, "load", broken)

    # When run
    code = main(["sandbox", "users"])

    # Then one line, and how to see more
    assert code == 1
    assert one_line(capsys.readouterr().err) == (
        "RuntimeError: catalogue unreadable (PHONEID_DEBUG=1 shows where it failed)"
    )


def test_phoneid_debug_shows_the_traceback(
    no_local_stack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a developer asking for tracebacks
    monkeypatch.setenv("PHONEID_DEBUG", "1")

    # When a command fails
    # Then the exception itself comes out
    with pytest.raises(FileNotFoundError):
        main(["identities", "import", str(tmp_path / "nope.jsonl"), "--local"])


def test_the_help_explains_failures_and_phoneid_debug(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])

    shown = capsys.readouterr().out
    assert "PHONEID_DEBUG=1 shows the traceback" in shown
    assert "exit code 2 when" in shown
