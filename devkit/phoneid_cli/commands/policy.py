"""``phoneid policy``: the default fraud policy, and checking a client's policy file."""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from phoneid_cli.output import read_text
from phoneid_cli.parsing import action_group
from phoneid_cli.tables import policy_markdown
from phoneid_cli.targets import Context


def register(commands: Any) -> None:
    policy = action_group(commands, "policy", "the fraud policy")
    show = policy.add_parser("show", help="print the default policy (YAML), or its tables (--markdown)")
    show.add_argument("--markdown", action="store_true", help="the tables of docs/fraud-policy.md")
    show.set_defaults(run=run_show)
    check = policy.add_parser("check", help="validate a policy file; errors name the bad entry")
    check.add_argument("file")
    check.set_defaults(run=run_check)


def read_policy(path: str) -> dict[str, Any]:
    """A policy document from a YAML or JSON file, validated; ``InvalidPolicy`` names the bad entry."""
    import yaml

    from phoneid.domain.policy import InvalidPolicy, parse_policy

    try:
        document = yaml.safe_load(read_text(Path(path)))
    except yaml.YAMLError as error:
        raise InvalidPolicy(f"{path} is not YAML or JSON: {error}") from None
    parse_policy(document)
    data: dict[str, Any] = document
    return data


def run_show(args: argparse.Namespace, context: Context) -> int:
    if args.markdown:
        sys.stdout.write(policy_markdown())
        return 0
    sys.stdout.write(resources.files("phoneid").joinpath("policy/default.yaml").read_text("utf-8"))
    return 0


def run_check(args: argparse.Namespace, context: Context) -> int:
    document = read_policy(args.file)
    print(f"{args.file}: a valid policy (version {document['version']}, {len(document['rules'])} rules)")
    return 0
