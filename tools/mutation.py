"""``make mutation``: cosmic-ray over the security-critical rules, each with the tests that cover it.

cosmic-ray mutates a file in place, so it runs on a copy of the working tree in a temporary
directory, never on the tree itself. Each target names one module, the functions in it that hold the
rules (the others' mutants are skipped), and a fast pytest command of the test files that cover
them. Every mutant runs that command (with a timeout); a failing command kills it. At the end: the
score of each target and of all, and every survivor as a diff, also kept in
.phoneid/mutation/TARGET.txt beside the session (TARGET.sqlite) that ``--survivors`` runs again
(docs/mutation.md; docs/adr/0110-mutation-testing-with-cosmic-ray.md).

    python tools/mutation.py                            # every target
    python tools/mutation.py token-windows ratelimit    # those targets only
    python tools/mutation.py --survivors token-windows  # the last run's survivors, after new tests
    python tools/mutation.py --list                     # the targets
"""

from __future__ import annotations

import argparse
import ast
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mutation_targets import CORE, KEPT_OPERATORS, TARGETS, Target

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.90
# Per mutant: the tests' own time is a second or two; the rest is the interpreter and the imports.
TIMEOUT_SECONDS = 60


def _copy_tree(into: Path) -> Path:
    """The working tree as it is (uncommitted edits included), without what is built or installed."""
    ignored = shutil.ignore_patterns(
        ".git", ".venv", "node_modules", ".aws-sam", ".phoneid", "__pycache__", ".*_cache", "*.pyc"
    )
    tree = into / "tree"
    shutil.copytree(ROOT, tree, ignore=ignored, symlinks=True)
    return tree


def _ranges(source: Path, functions: tuple[str, ...]) -> list[tuple[int, int]]:
    """The lines of each named function (``Class.method`` for a method, decorators included) or
    module-level constant."""
    found: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Assign | ast.AnnAssign) and not prefix:  # a module's constant
                for name in child.targets if isinstance(child, ast.Assign) else [child.target]:
                    if isinstance(name, ast.Name):
                        found[name.id] = (child.lineno, child.end_lineno or child.lineno)
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                found[name] = (first, child.end_lineno or child.lineno)
                visit(child, f"{name}.")

    visit(ast.parse(source.read_text()), "")
    missing = [name for name in functions if name not in found]
    if missing:
        raise SystemExit(
            f"{source}: no function {', '.join(missing)} (tools/mutation.py's TARGETS name them)"
        )
    return [found[name] for name in functions]


def _test_command(target: Target) -> str:
    conftest = [] if target.conftest else ["--noconftest"]
    select = ["-k", shlex.quote(target.select)] if target.select else []
    return " ".join(
        [
            sys.executable,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            *conftest,
            *select,
            *target.tests,
        ]
    )


def _environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    # The copy's packages before the editable install's (which points at the working tree).
    env["PYTHONPATH"] = os.pathsep.join(
        str(tree / part) for part in ("layers/core", "devkit", "clients/python/src", ".")
    )
    # No hypothesis or schemathesis plugin: the targets' tests use neither, and they take seconds to load.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["BOTO_DISABLE_CRT"] = "true"
    for name, value in {
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_SERVICE_NAME": "phoneid",
        "POWERTOOLS_METRICS_NAMESPACE": "PhoneID",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }.items():
        env.setdefault(name, value)
    env.pop("PHONEID_ACCESS_RECORDS", None)
    return env


@dataclass
class Score:
    target: Target
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    skipped: int = 0
    incompetent: int = 0  # not in the score: the mutant did not make code that runs
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return self.killed + len(self.survived)


def _previous(saved: Path) -> tuple[int, set[tuple[str, int, int, int]]]:
    """A saved session's killed count and its survivors (operator, occurrence, line, column)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    if not saved.exists():
        raise SystemExit(f"--survivors: no earlier run of this target ({saved})")
    killed, survivors = 0, set()
    with use_db(str(saved), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if (
                result.worker_outcome == WorkerOutcome.SKIPPED
                or result.test_outcome == TestOutcome.INCOMPETENT
            ):
                continue
            if result.is_killed:
                killed += 1
            else:
                mutation = item.mutations[0]
                survivors.add((mutation.operator_name, mutation.occurrence, *mutation.start_pos))
    return killed, survivors


def _run(target: Target, tree: Path, work: Path, saved: Path, *, survivors_only: bool) -> Score:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    began = time.monotonic()
    module = tree / CORE / target.module
    env = _environment(tree)
    command = _test_command(target)
    # The tests must pass on the code as it is, in the copy, or no mutant's death means anything.
    baseline = subprocess.run(  # noqa: S603
        shlex.split(command), cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    if baseline.returncode != 0:
        raise SystemExit(f"{target.name}: the tests fail before any mutation:\n{baseline.stdout[-3000:]}")
    config = work / f"{target.name}.toml"
    session = work / f"{target.name}.sqlite"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        f"timeout = {TIMEOUT_SECONDS}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
    )
    cosmic_ray = [str(Path(sys.executable).parent / "cosmic-ray")]
    subprocess.run([*cosmic_ray, "init", str(config), str(session)], cwd=tree, env=env, check=True)  # noqa: S603
    ranges = _ranges(module, target.functions) if target.functions else None
    # Re-running the survivors of the saved session only: the module is the same, so cosmic-ray
    # makes the same mutants, known by operator, occurrence and position.
    killed_before, again = _previous(saved) if survivors_only else (0, set())
    with use_db(str(session), WorkDB.Mode.open) as db:
        skipped = [
            item.job_id
            for item in db.pending_work_items
            for mutation in item.mutations
            if not KEPT_OPERATORS.match(mutation.operator_name)
            or (ranges is not None and not any(a <= mutation.start_pos[0] <= b for a, b in ranges))
            or (
                survivors_only
                and (mutation.operator_name, mutation.occurrence, *mutation.start_pos) not in again
            )
        ]
        if skipped:
            db.set_multiple_results(
                skipped, WorkResult(output="not a rule's mutant", worker_outcome=WorkerOutcome.SKIPPED)
            )
        pending = len(db.pending_work_items)
    print(
        f"{target.name}: {pending} mutants of {target.module} ({len(skipped)} skipped), tests: {command}",
        flush=True,
    )
    subprocess.run([*cosmic_ray, "exec", str(config), str(session)], cwd=tree, env=env, check=True)  # noqa: S603
    score = Score(target, killed=killed_before, skipped=len(skipped), seconds=time.monotonic() - began)
    if not survivors_only:
        shutil.copyfile(session, saved)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.test_outcome == TestOutcome.INCOMPETENT:  # a mutant that cannot run (not code)
                score.incompetent += 1
            elif result.is_killed:
                score.killed += 1
            else:
                mutation = item.mutations[0]
                score.survived.append(
                    f"{target.module}:{mutation.start_pos[0]} {mutation.operator_name}\n{result.diff or ''}"
                )
    return score


def _line(score: Score) -> str:
    rate = score.killed / score.total if score.total else 1.0
    return (
        f"{score.target.name:14} {score.killed:7} {score.total:6} {rate:7.1%} {score.skipped:8}"
        f" {score.seconds:5.0f}s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="names of targets (default: all)")
    parser.add_argument("--list", action="store_true", help="list the targets and exit")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="run only the last full run's survivors again (after tests were added), scored with its kills",
    )
    args = parser.parse_args()
    if args.list:
        for target in TARGETS:
            print(f"{target.name:14} {CORE}/{target.module}: {target.why}")
        return 0
    unknown = set(args.targets) - {target.name for target in TARGETS}
    if unknown:
        parser.error(f"no target {', '.join(sorted(unknown))} (--list names them)")
    chosen = [target for target in TARGETS if not args.targets or target.name in args.targets]
    work = Path(tempfile.mkdtemp(prefix="phoneid-mutation-"))
    reports = ROOT / ".phoneid" / "mutation"
    reports.mkdir(parents=True, exist_ok=True)
    scores = []
    try:
        tree = _copy_tree(work)
        for target in chosen:
            saved = reports / f"{target.name}.sqlite"
            score = _run(target, tree, work, saved, survivors_only=args.survivors)
            text = "".join(f"SURVIVED {survivor}\n" for survivor in score.survived)
            (reports / f"{target.name}.txt").write_text(text + _line(score) + "\n")
            print(text, end="", flush=True)
            scores.append(score)
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\n{'target':14} {'killed':>7} {'total':>6} {'score':>7} {'skipped':>8} {'time':>6}")
    for score in scores:
        print(_line(score))
    killed = sum(score.killed for score in scores)
    total = sum(score.total for score in scores)
    rate = killed / total if total else 1.0
    print(f"{'all':14} {killed:7} {total:6} {rate:7.1%}")
    return 0 if rate >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
