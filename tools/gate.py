"""``make test``: the gate's phases in order, each timed ("phase NAME: N s"), a summary at the end.

A step of ``a+b`` runs the phases ``a`` and ``b`` at once (each's output shown whole when it ends): what
shares the machine's two CPUs without changing what either checks (docs/performance.md, "The gate").
Each phase is ``make PHASE`` with the phases before it taken as made (``-o``), so that none is run
twice. Arguments that start with ``-`` are make's options for every phase (``make test
GATE_FLAGS=--old-file=node_modules/.installed`` keeps a node_modules installed otherwise). The first
failure stops the gate, with its phase named. Standard library only: it runs before the virtualenv
exists.
"""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def _run(phase: str, made: list[str], options: list[str], alone: bool) -> tuple[str, int, float, str]:
    """``make phase`` (what is already made not remade): its name, exit status, seconds and output
    (shown as it comes when the phase runs alone)."""
    began = time.monotonic()
    done = subprocess.run(  # noqa: S603 - make, with our own targets
        ["make", "--no-print-directory", *options, *(f"--old-file={each}" for each in made), phase],  # noqa: S607
        stdout=None if alone else subprocess.PIPE,
        stderr=None if alone else subprocess.STDOUT,
        text=True,
        check=False,
    )
    return phase, done.returncode, time.monotonic() - began, done.stdout or ""


def main(arguments: list[str]) -> int:
    options = [each for each in arguments if each.startswith("-")]
    steps = [each for each in arguments if not each.startswith("-")]
    began = time.monotonic()
    made: list[str] = []
    times: list[tuple[str, float]] = []
    for step in steps:
        phases = step.split("+")
        with ThreadPoolExecutor(max_workers=len(phases)) as pool:
            ran = list(
                pool.map(
                    _run,
                    phases,
                    [list(made)] * len(phases),
                    [options] * len(phases),
                    [len(phases) == 1] * len(phases),
                )
            )
        failed = False
        for phase, status, seconds, output in ran:
            sys.stdout.write(output)
            print(f"phase {phase}: {seconds:.0f} s" + ("" if status == 0 else " (failed)"), flush=True)
            times.append((phase, seconds))
            failed = failed or status != 0
        if failed:
            return 1
        made += phases
    print("gate: " + ", ".join(f"{phase} {seconds:.0f} s" for phase, seconds in times), end="")
    print(f"; {time.monotonic() - began:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
