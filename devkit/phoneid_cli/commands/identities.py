"""``phoneid identities``: identity data loaded from files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from phoneid_cli.errors import CommandError
from phoneid_cli.output import read_text
from phoneid_cli.parsing import action_group, add_import_file, import_file_format
from phoneid_cli.targets import Context


def register(commands: Any) -> None:
    identities = action_group(commands, "identities", "identity data")
    load = identities.add_parser("import", help="load identities from JSON Lines or CSV")
    add_import_file(load)
    load.set_defaults(run=run_import)


def run_import(args: argparse.Namespace, context: Context) -> int:
    path = Path(args.file)
    text = read_text(path)  # a missing file is said before any stack is looked for
    imports = context.services(args).identity_import
    try:
        report = imports.run(text, import_file_format(path, args.format), skip_invalid=args.skip_invalid)
    except ValueError as error:  # a CSV header without the required columns
        raise CommandError(f"{path}: {error}") from None
    for line, reason in report.rejected:
        print(f"{path}:{line}: rejected: {reason}", file=sys.stderr)
    identities = "identity" if report.imported == 1 else "identities"
    print(f"imported {report.imported} {identities}, rejected {len(report.rejected)}")
    return 1 if report.rejected and not args.skip_invalid else 0
