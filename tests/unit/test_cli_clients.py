"""`phoneid clients`: the flags a new client gets, and what an unknown client id tells the operator."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from phoneid.services.clients import ClientAdmin
from phoneid_cli.main import main
from phoneid_cli.targets import Context
from tests.fakes import FakeClock, InMemoryClientStore


class InMemoryStack(Context):
    """A stack whose client admin is in memory."""

    def __init__(self) -> None:
        super().__init__()
        self.admin = ClientAdmin(InMemoryClientStore(), FakeClock(), "sandbox", "US")

    def services(self, args: Any) -> Any:
        return SimpleNamespace(client_admin=self.admin)


def created_flags(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["clients", "create", *argv, "--json"], InMemoryStack()) == 0
    flags: list[str] = json.loads(capsys.readouterr().out)["flags"]
    return flags


@pytest.mark.parametrize(
    ("argv", "flags"),
    [
        ([], ["auto-enrollment"]),
        (["--flag", "phone-number-change"], ["auto-enrollment", "phone-number-change"]),
        (["--flag", "key-persistence", "--flag", "auto-enrollment"], ["auto-enrollment", "key-persistence"]),
        (["--no-flag", "auto-enrollment"], []),
        (["--flag", "po-box-addresses", "--no-flag", "auto-enrollment"], ["po-box-addresses"]),
    ],
)
def test_flags_add_to_the_defaults_and_no_flag_leaves_one_off(
    argv: list[str], flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert created_flags(argv, capsys) == flags


def test_a_flag_both_added_and_left_off_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["clients", "create", "--flag", "key-persistence", "--no-flag", "key-persistence"], InMemoryStack()
    )

    assert code == 2
    assert capsys.readouterr().err == (
        "phoneid: --flag and --no-flag both name key-persistence: keep one of them\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["clients", "disable", "deadbeef"],
        ["clients", "enable", "deadbeef"],
        ["clients", "update", "deadbeef", "--default-policy"],
        ["clients", "update", "deadbeef", "--no-webhook"],
    ],
)
def test_an_unknown_client_says_how_to_find_the_right_id(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv, InMemoryStack()) == 2
    assert capsys.readouterr().err == "phoneid: no client deadbeef: list them with phoneid clients list\n"
