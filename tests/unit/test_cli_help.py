"""`phoneid --help` lists every command and action the parser knows, with its help; every option of
every command says what it does, in plain text."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from phoneid_cli.main import main
from phoneid_cli.main import parser as cli_parser


def test_help_lists_every_action_of_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])

    shown = capsys.readouterr().out
    assert exited.value.code == 0
    for line in (
        "phoneid clients disable",
        "phoneid clients enable",
        "phoneid clients update",
        "phoneid connect rotate-key",
        "phoneid webhooks redrive",
        "phoneid signals kinds",
        "phoneid sandbox users",
    ):
        assert line in shown
    assert "phoneid clients enable               enable a client" in shown


def every_parser(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The root parser, each command's and each action's."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from every_parser(sub)


def test_every_option_of_every_command_has_help_and_no_markup() -> None:
    helpless, marked = [], []
    for command in every_parser(cli_parser()):
        for action in command._actions:
            if action.option_strings and not action.help:
                helpless.append(f"{command.prog} {'/'.join(action.option_strings)}")
        shown = command.format_help()
        if "``" in shown or re.search(r":(?:ref|class|func|mod):`", shown):
            marked.append(command.prog)

    assert helpless == [], "options without help"
    assert marked == [], "reStructuredText markup in the help"


def test_dev_help_names_the_environment_it_reads(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["dev", "-h"])

    shown = capsys.readouterr().out
    for variable in (
        "PORT",
        "PHONEID_TIER",
        "PHONEID_REGION",
        "PHONEID_DATA",
        "PHONEID_CLIENT_ID",
        "PHONEID_DEVICE_MSISDN",
    ):
        assert variable in shown.split("environment:")[1], variable
