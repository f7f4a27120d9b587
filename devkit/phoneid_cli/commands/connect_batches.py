"""``phoneid connect status`` and ``submit``: Connect batches, read and run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from phoneid_cli.batches import batch_data, batch_line, client_of_file
from phoneid_cli.errors import CommandError
from phoneid_cli.output import show
from phoneid_cli.parsing import add_local, add_target
from phoneid_cli.submission import Submission
from phoneid_cli.targets import Context


def register_actions(connect: Any) -> None:
    status = connect.add_parser("status", help="the state of recent batches, or of one file's batches")
    status.add_argument("file", nargs="?", help="a batch file (its name is enough)")
    status.add_argument("--client", help="one client's batches (its client name)")
    status.add_argument("--limit", type=int, default=20, help="at most this many, newest first (default 20)")
    add_target(status)
    status.set_defaults(run=run_status)
    submit = connect.add_parser(
        "submit", help="put a file into its client's upload directory, wait, download the results beside it"
    )
    submit.add_argument("file")
    add_local(submit, required=True)
    submit.add_argument("--timeout", type=float, default=3600, help="seconds to wait for the batch")
    submit.set_defaults(run=run_submit)


def run_status(args: argparse.Namespace, context: Context) -> int:
    states = context.services(args).batch_states
    if args.file:
        name = Path(args.file).name
        batches = [b for b in states.list_recent(client_of_file(name), limit=100) if b.file_name == name]
    else:
        batches = states.list_recent(args.client, limit=args.limit)
    data = [batch_data(batch) for batch in batches]
    empty = f"no batch of {Path(args.file).name}" if args.file else "no batches"
    show(data, args.json, [batch_line(d) for d in data] or [empty])
    return 0


def _progress(path: Path) -> Any:
    """Progress lines on stderr: one line redrawn on a terminal; elsewhere each state, not each percent."""
    interactive = sys.stderr.isatty()

    def progress(text: str, final: bool) -> None:
        if interactive:
            print(f"\r{text:<100}", end="\n" if final else "", file=sys.stderr, flush=True)
        elif final or not text.startswith(path.name + ": uploading"):
            print(text, file=sys.stderr, flush=True)

    return progress


def run_submit(args: argparse.Namespace, context: Context) -> int:
    from botocore.config import Config

    from phoneid.domain.connect import BatchState

    path = Path(args.file)
    if not path.is_file():
        raise CommandError(f"{path}: no such file: check the path")
    services = context.services(args)
    client_name = client_of_file(path.name)
    if services.connect_profiles.get_by_name(client_name) is None:
        raise CommandError(
            f"no Connect client named {client_name!r} (from the file name): onboard it first "
            "(phoneid connect onboard CLIENT_ID --name ... --local)"
        )
    bucket = services.settings.connect_bucket
    if not bucket:
        raise CommandError("this stack has no Connect bucket (CONNECT_BUCKET is not set)")
    # The local stack's moto: path-style, with retries.
    config = Config(s3={"addressing_style": "path"}, retries={"mode": "standard", "max_attempts": 3})
    submission = Submission(
        s3=context.target(args).client("s3", config),
        bucket=bucket,
        states=services.batch_states,
        progress=_progress(path),
    )
    uploaded = submission.upload(path, client_name)
    batch = submission.follow(path, client_name, uploaded, args.timeout)
    if batch is None:
        return 1
    for written in submission.download_results(path, client_name):
        print(f"wrote {written}")
    return 0 if batch.state is BatchState.DELIVERED else 1
