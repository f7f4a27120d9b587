"""``phoneid sandbox``: the Sandbox tier's test users."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from phoneid_cli.output import show
from phoneid_cli.parsing import action_group
from phoneid_cli.tables import sandbox_markdown
from phoneid_cli.targets import Context


def register(commands: Any) -> None:
    sandbox = action_group(commands, "sandbox", "Sandbox tier")
    users = sandbox.add_parser("users", help="list the Sandbox test users")
    users.add_argument("--region", choices=["US", "EU"], help="one region's users (default: both)")
    users.add_argument("--json", action="store_true", help="print JSON")
    users.add_argument("--markdown", action="store_true", help="the table of docs/sandbox.md")
    users.set_defaults(run=run_users)


def run_users(args: argparse.Namespace, context: Context) -> int:
    from phoneid.domain.sandbox import Catalogue

    if args.markdown:
        sys.stdout.write(sandbox_markdown())
        return 0
    data = [
        {
            "scenario": u.scenario.value,
            "region": u.region,
            "solution": u.solution_name,
            "phoneNumber": u.phone_number,
            "firstName": u.identity.first_name,
            "lastName": u.identity.last_name,
            "dob": u.identity.dob,
            "ssn": u.identity.ssn,
            "description": u.description,
        }
        for u in Catalogue.load(args.region)
    ]
    lines = [
        f"{u['scenario']:<26} {u['region']}  {u['phoneNumber']:<14}  "
        f"{u['firstName'] + ' ' + u['lastName']:<24}  dob {u['dob']}  ssn {u['ssn']}  {u['solution']:<13}  "
        f"{u['description']}"
        for u in data
    ]
    show(data, args.json, lines)
    return 0
