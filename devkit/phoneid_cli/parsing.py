"""The pieces every command's parser is made of: one-line usage errors, the target options, and the
overview of every command the root parser's help lists."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from phoneid_cli.local_stacks import local_url

LOCAL_HELP = (
    "the running local stack: alone, the last one started here (make dev); "
    "with a port or URL (3101, http://127.0.0.1:3101), the one there"
)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other failure (exit code 2)."""

    def error(self, message: str) -> Any:
        where = self.prog.removeprefix("phoneid").strip()
        self.exit(2, f"phoneid: {where + ': ' if where else ''}{message} ({self.prog} -h shows the usage)\n")


def add_local(parser: argparse.ArgumentParser | Any, *, required: bool = False) -> None:
    parser.add_argument(
        "--local",
        nargs="?",
        const=True,
        type=local_url,
        required=required,
        metavar="PORT|URL",
        help=LOCAL_HELP,
    )


def add_target(sub: argparse.ArgumentParser) -> None:
    """--local or --stack (else the environment's stack), and --json."""
    chosen = sub.add_mutually_exclusive_group()
    add_local(chosen)
    chosen.add_argument("--stack", help="a deployed CloudFormation stack name")
    sub.add_argument("--json", action="store_true", help="print JSON")


def add_import_file(parser: argparse.ArgumentParser) -> None:
    """The options of a command that loads records from a file: the file, its format, the invalid ones."""
    parser.add_argument("file")
    parser.add_argument("--format", choices=["jsonl", "csv"], help="default: csv for a .csv file, else jsonl")
    parser.add_argument(
        "--skip-invalid", action="store_true", help="import the valid records even if some are not"
    )
    add_target(parser)


def import_file_format(path: Path, given: str | None) -> str:
    return given or ("csv" if path.suffix.lower() == ".csv" else "jsonl")


def action_group(commands: Any, name: str, helped: str) -> Any:
    """A command whose actions are subcommands (``phoneid clients create``)."""
    return commands.add_parser(name, help=helped).add_subparsers(dest="action", required=True)


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand, in the order they were added."""
    found: list[tuple[str, str, argparse.ArgumentParser]] = []
    for action in parser._actions:  # argparse keeps subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return found


def overview(root: argparse.ArgumentParser) -> list[str]:
    """Every command and action with its help, from the parser: the overview cannot go stale."""
    lines = []
    for name, helped, command in _subcommands(root):
        actions = _subcommands(command)
        if not actions:
            lines.append(f"  phoneid {name:<28} {helped}")
        for action, action_help, _ in actions:
            lines.append(f"  phoneid {name + ' ' + action:<28} {action_help}")
    return lines
