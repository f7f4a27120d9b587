"""``phoneid signals``: the operator's signal lists."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from phoneid_cli.errors import CommandError
from phoneid_cli.output import read_text, show
from phoneid_cli.parsing import action_group, add_import_file, import_file_format
from phoneid_cli.targets import Context


def register(commands: Any) -> None:
    from phoneid.domain.signals import ListKind

    signals = action_group(commands, "signals", "the operator's signal lists")
    load = signals.add_parser("import", help="load one list from JSON Lines or CSV")
    load.add_argument(
        "kind", choices=[k.value for k in ListKind], metavar="KIND", help=", ".join(k.value for k in ListKind)
    )
    add_import_file(load)
    load.set_defaults(run=run_import)
    kinds = signals.add_parser("kinds", help="each kind of list and the fields of its records")
    kinds.add_argument("--json", action="store_true", help="print JSON")
    kinds.set_defaults(run=run_kinds)


def run_import(args: argparse.Namespace, context: Context) -> int:
    from phoneid.domain.signals import ListKind

    path = Path(args.file)
    text = read_text(path)
    imports = context.services(args).signal_list_import
    try:
        report = imports.run(
            ListKind(args.kind), text, import_file_format(path, args.format), skip_invalid=args.skip_invalid
        )
    except ValueError as error:  # a CSV header that does not fit the kind
        raise CommandError(f"{path}: {error}") from None
    for line, reason in report.rejected:
        print(f"{path}:{line}: rejected: {reason}", file=sys.stderr)
    print(
        f"imported {report.imported} {args.kind} records ({report.entries} entries), "
        f"rejected {len(report.rejected)}"
    )
    return 1 if report.rejected and not args.skip_invalid else 0


def run_kinds(args: argparse.Namespace, context: Context) -> int:
    from phoneid.domain.signals import ListKind
    from phoneid.services.signal_lists import as_mapping, describe, field_summary, record_fields

    lines = [f"{k.value:<24} {field_summary(record_fields(k))}\n{'':<24} {describe(k)}" for k in ListKind]
    show([as_mapping(k) for k in ListKind], args.json, lines)
    return 0
