"""The policy backtest over N decision records: records/s, elapsed time and memory of a candidate
policy replayed, streaming, over a history kept as JSON Lines.

1. Writes N records (default 1,000,000) to a temporary file, one ``GET /v3/decisions/{id}`` body a
   line (bench/backtest_bench/history.py): a seeded, mostly clean mix of facts over the default
   policy's signals, decided by two live policies (the default, and a client's own that only
   monitors 9177), 1% not decided by a policy, a share with facts of their own. Not timed.
2. Replays a candidate over the file (``phoneid.domain.backtest.Replay``), one ``json.loads`` per
   line: it tightens the SIM trust rule (9133 below 50), loosens the SIM swap rule (9135 below 6)
   and tightens the recent-checks rule (9302 at 5), so some decisions flip each way. Timed: the
   reading, ``json.loads`` and the replay; and, before it, the floor: the reading and ``json.loads``
   alone.

Prints the file's size, records/s and elapsed time, RSS before the replay, at 10%, 50% and 100% of
it (with the verdicts memoised then, the one thing that grows, up to its bound) and its peak
(VmHWM, reset before it): flat memory shows as RSS that grows no more than the memo does.
Then the replay's own report. One process, one CPU. Prints; asserts nothing.

    .venv/bin/python bench/backtest.py [--records 1000000] [--distinct 20000] [--unique 0.01] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import _setup  # noqa: F401 - first: the import path and the fake AWS environment (bench/_setup.py)

from bench.backtest_bench.history import write
from bench.monitor_bench.memory import peak_mb, reset_peak, resident_mb
from phoneid.domain.backtest import DEFAULT_CACHE, Replay, policies_by_hash, render
from phoneid.domain.evaluation import default_policy
from phoneid.domain.policy import Policy, parse_policy


def changed(version: str, **tests: dict[str, Any]) -> Policy:
    """The default policy with the first condition of some rules changed (``tests`` by code) or
    their action (``action`` in the tests)."""
    document = default_policy().model_dump(mode="json", by_alias=True, exclude_none=True)
    document["version"] = version
    for rule in document["rules"]:
        change = dict(tests.get(str(rule["code"]), {}))
        if "action" in change:
            rule["action"] = change.pop("action")
        rule["when"][0].update(change)
    return parse_policy(document)


def _floor(path: Path) -> float:
    """Seconds to read the file and ``json.loads`` each line, nothing else: what any replay pays."""
    started = time.perf_counter()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            json.loads(line)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--distinct", type=int, default=20_000, help="fact sets in the shared pool")
    parser.add_argument("--unique", type=float, default=0.01, help="share of records with facts of their own")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    live = (default_policy(), changed("client-2026-10", **{"9177": {"action": "monitor"}}))
    candidate = changed("candidate", **{"9133": {"below": 50}, "9135": {"below": 6}, "9302": {"atLeast": 5}})
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "decisions.jsonl"
        started = time.perf_counter()
        size = write(path, args.records, live, distinct=args.distinct, unique=args.unique, seed=args.seed)
        print(
            f"history: {args.records:,} records, {size / 2**20:,.0f} MiB"
            f" ({size / max(args.records, 1):,.0f} B"
            f" a record), written in {time.perf_counter() - started:,.1f} s"
        )

        floor = _floor(path)
        replay = Replay(policies_by_hash(live), candidate)
        marks = {max(args.records * share // 10, 1): f"{share * 10}%" for share in (1, 5)}
        seen: list[str] = []
        reset_peak()
        before = resident_mb()
        started = time.perf_counter()
        with path.open(encoding="utf-8") as lines:
            for n, line in enumerate(lines, 1):
                replay.add(json.loads(line))
                if n in marks:
                    seen.append(f"{resident_mb()} MB at {marks[n]} ({replay.memoised:,} verdicts memoised)")
        elapsed = time.perf_counter() - started
        result = replay.result()
        seen.append(f"{resident_mb()} MB at 100% ({replay.memoised:,} verdicts memoised)")

    print(f"replay: {result.read:,} records in {elapsed:,.2f} s, {result.read / elapsed:,.0f} records/s")
    print(f"floor (the file read and json.loads only): {floor:,.2f} s, {result.read / floor:,.0f} records/s")
    print(f"RSS: {before} MB before, {', '.join(seen)}; peak {peak_mb()} MB")
    print(f"     (verdicts are memoised in a bounded cache of {DEFAULT_CACHE:,}: nothing else grows with N)")
    print()
    print(render(result), end="")


if __name__ == "__main__":
    main()
