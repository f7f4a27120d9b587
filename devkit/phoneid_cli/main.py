"""The phoneid command: the local stack, and operator tasks against a local or deployed stack.

Operator commands act on the stack named by --stack (a deployed CloudFormation stack), on a running
local stack with --local (the last one started here; --local PORT or --local URL names another), or
else on the environment's settings (PHONEID_TIER, tables, ...).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from phoneid_cli.commands import MODULES
from phoneid_cli.errors import explain
from phoneid_cli.parsing import Parser, overview
from phoneid_cli.targets import Context

FAILURES_HELP = (
    "A failure is one line on stderr, 'phoneid: what went wrong: what to do', and exit code 2 when\n"
    "the command line asks for something wrong (an option, a file, a spec), 1 otherwise (nothing\n"
    "answers, AWS refuses, records are rejected). PHONEID_DEBUG=1 shows the traceback as well."
)


def parser() -> argparse.ArgumentParser:
    root = Parser(prog="phoneid", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = root.add_subparsers(dest="command", required=True)
    for module in MODULES:
        module.register(commands)
    root.epilog = (
        "commands:\n"
        + "\n".join(overview(root))
        + "\n\n'phoneid COMMAND ACTION -h' for an action's options\n\n"
        + FAILURES_HELP
    )
    return root


def main(argv: Sequence[str] | None = None, context: Context | None = None) -> int:
    """Run one command; ``context``: what it reaches the world through (by default the real one)."""
    context = context if context is not None else Context()
    try:
        args = parser().parse_args(argv)
        code = int(args.run(args, context))
        sys.stdout.flush()  # a reader that went away shows here, not as a traceback at exit
    except BrokenPipeError:
        # The reader stopped early (`phoneid sandbox users | head`): stop quietly, as Python's docs
        # advise ("Note on SIGPIPE"): stdout to devnull so the flush at exit cannot fail again, and
        # exit code 1 as Python gives on EPIPE.
        _stdout_to_devnull()
        return 1
    except KeyboardInterrupt:
        print("phoneid: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if os.environ.get("PHONEID_DEBUG", "") not in ("", "0"):
            raise
        code, message = explain(error, context.local_aws)
        print(f"phoneid: {message}", file=sys.stderr)
    return code


def _stdout_to_devnull() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (e.g. captured)
        pass


if __name__ == "__main__":
    sys.exit(main())
