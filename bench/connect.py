"""A Connect file of N rows end to end on the local stack, against a floor measured in the same run.

Generates an N-row ``humanAssurance`` file for the Sandbox US stack, starts ``phoneid dev`` as a
subprocess on free ports (as tests/e2e/conftest.py does), creates a ``verified-user`` client and
onboards it (``phoneid clients create`` and ``phoneid connect onboard`` with ``--local``), then does
what ``phoneid connect submit FILE --local`` does: puts the file under the client's upload prefix and
waits for the batch's final state. Prints rows per second end to end; each step's time (from the
execution's history in moto's Step Functions) and peak RSS; and the floor: a plain ``csv`` +
``phonenumbers`` pass over the same file plus a bare DynamoDB ``BatchWriteItem`` of the run's own
enrollments (every item it made in the enrollments table, copied into a new table of the same moto),
and the ratio end to end / floor.

Before the measured run a 2,000-row file goes through, so that each step's worker processes are
started and warm, as in a stack in use (Lambda's warm execution environments).

Memory. ``phoneid dev`` runs each step's Lambda task in worker processes of its own
(``phoneid_dev.processes``, named by ``--function``), so a thread here reads each worker's ``VmHWM``
(/proc/PID/status): a step's peak RSS is its highest worker's. The server's own process (moto with
its storage, the Step Functions interpreter, the API) is sampled every 20 ms and printed apart.
With ``PHONEID_LAMBDA_PROCESSES=0`` the steps run in the server, and a step's peak is the server's
highest RSS while it ran: an upper bound that includes moto's storage.

The file's mix: one row per US test user with that user's own name; most rows a test user's number
with another, unique, name (Human Assurance does not decide by name, so these pass unless the user
scripts a fraud signal, and a passing row is enrolled: a new identity when it has a Client Customer
ID, the number's existing one otherwise; users of the ``identity`` solution give 8009); about 12 %
numbers that are no test user (valid, 8007); 2 % partner rows; 1.5 % of each row error code; 1.5 %
duplicates; Client Customer IDs on 60 % of the rows, unique per row. So about two rows in five make
a new identity: the workflow's heaviest part, its writes, is measured at a realistic share.

These are figures for comparing changes on one machine (moto instead of DynamoDB, S3 and Step
Functions, all of them in one process), not a prediction of the time in AWS.

    .venv/bin/python bench/connect.py [--rows N] [--keep]     # N defaults to 800,000
    .venv/bin/python bench/connect.py --profile [--rows N]    # cProfile of verify_chunk (20,000 rows)
    .venv/bin/python bench/connect.py --rows N --baseline REV  # REV's package first, then this one

With ``--baseline REV`` the same file goes through a local stack running the domain package as it was at
git revision REV (checked out into a temporary worktree; this checkout's devkit and dependencies), then
through one running this checkout's, one after the other in one session, each with its own floor; the
last lines compare the two ratios, which is what to read on a shared machine.
"""

from __future__ import annotations

import argparse
import sys

import _setup  # noqa: F401 - first: the import path and the fake AWS environment (bench/_setup.py)

# isort: split

from bench.connect_bench.baseline import checkout
from bench.connect_bench.profiling import profile
from bench.connect_bench.run import FINISHED, run


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=800_000)
    parser.add_argument("--keep", action="store_true", help="keep the working directory (file, results, log)")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds to wait for the batch")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile the steps in this process instead (default 20,000 rows)",
    )
    parser.add_argument("--top", type=int, default=30, help="functions listed by --profile")
    parser.add_argument("--baseline", metavar="REV", help="first run the same file at git revision REV")
    args = parser.parse_args()
    if args.profile:
        return profile(args.rows if "--rows" in sys.argv else 20_000, args.top)
    if not args.baseline:
        return run(args.rows, args.keep, args.timeout)
    with checkout(args.baseline) as tree:
        before = run(args.rows, args.keep, args.timeout, tree, f"{args.baseline} (a temporary worktree)")
    now = run(args.rows, args.keep, args.timeout)
    print()
    for label, rows, end_to_end, floor in FINISHED:
        print(
            f"{label:<40} {rows:,} rows  {end_to_end:8.1f} s  floor {floor:6.1f} s  "
            f"ratio {end_to_end / floor:5.1f} x  {rows / end_to_end:6.0f} rows/s"
        )
    return before or now


if __name__ == "__main__":
    sys.exit(main())
