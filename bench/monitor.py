"""The change monitor's pass over N active identities on moto, every identity's check counted and
proven, against the floor of a bare parallel scan of the same table, measured in the same run; then
the ten-million-a-day model with its AWS cost per million identities checked.

What it does, in one process (``mock_aws``, moto patched as ``phoneid dev`` patches it, the
paged-scan patch among them: docs/adr/0072-patches-of-moto.md):

1. Provisions the Sandbox US stack (``tests.harness.Api.on_moto``), creates 10 clients, and enrolls
   a sample (default 2,000) of active identities through the enrollment store's own bulk path
   (``enroll_many``, 1,000 a call, as Connect's chunks do: each identity item with its sealed PII,
   its place and its number's roster). A pass over the sample runs under bench/cost_bench's meter
   (its three tasks invoked one at a time, as the workflow's states invoke them): the AWS calls,
   DynamoDB request units and CPU of one identity checked.
2. Enrolls the rest, up to N (default 200,000), the same way.
3. The floor: a bare parallel scan of the same table (the segments the pass plans, pages of 100
   items, the pass's filter and projection, through the same adapter), nothing checked.
4. A pass through the monitor's workflow: an execution of MonitorStateMachine
   (statemachines/monitor.asl.json) in moto's Step Functions interpreter, its Distributed Map's child
   executions running the segment task until done, its Lambda tasks run by the template's handlers
   in this process (the local stack's workflow emulation, as the integration tests and ``phoneid
   dev`` run it; one invocation at a time in one process, so the Map's concurrency overlaps nothing
   here). Then the proof: every active identity carries the pass's marker (its stored monitor state's
   passId), its check was saved exactly once under the pass, the signal source (Sandbox: the port
   events and line types lists) was asked exactly once per identity and list, and the pass's own
   total equals the number of active identities.
5. A pass interrupted: one segment's progress cannot be kept a third of the way in (the task fails after
   checking the page, on every retry), so the execution fails unfinished; the fault is removed and
   the same passId started again. Proven as above over both executions: totals equal N, nobody
   checked twice.

Prints identities/s, wall time and per-phase times (plan, segments, summary), peak RSS of each phase
(VmHWM, reset before it; moto's storage of the table is in every phase, its size printed first),
and the pass against the floor. Retry waits are skipped (``retry_waits.retry_delay_scale`` 0); moto's
interpreter prints the interrupted pass's task failures to stderr.

Why in this process and not through ``phoneid dev``'s server: the same workflow emulation and the
same handlers run either way; in-process, the counts are taken where they happen (the monitor state
store, the lists adapter) and the high-water mark of memory is one process's. Through the server
every DynamoDB call would add an HTTP round trip in the worker processes, measuring the emulation's
transport rather than the pass.

These are figures for comparing changes on one machine (moto instead of DynamoDB and Step
Functions), not a prediction of the time in AWS; the model (``bench.cost_bench.monitor_model``) is.

    .venv/bin/python bench/monitor.py [--identities N] [--sample 2000]
    .venv/bin/python bench/monitor.py --model-only      # the metered sample and the model only
"""

from __future__ import annotations

import argparse
import sys

import _setup  # noqa: F401 - first: the import path and the fake AWS environment (bench/_setup.py)

# isort: split

from bench.monitor_bench.run import run


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--identities", type=int, default=200_000)
    parser.add_argument("--sample", type=int, default=2_000, help="identities of the metered pass")
    parser.add_argument("--model-only", action="store_true", help="the metered sample and the model only")
    args = parser.parse_args()
    if not 0 < args.sample <= args.identities:
        parser.error("--sample must be between 1 and --identities")
    return run(args.identities, args.sample, args.model_only)


if __name__ == "__main__":
    sys.exit(main())
