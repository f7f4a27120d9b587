"""A candidate fraud policy replayed over past decisions, before a client is switched to it.

Each decision record keeps the policy that decided (its content hash) and the facts it evaluated
(domain.decisions). A replay reads records as ``GET /v3/decisions/{id}`` shows them, JSON-decoded,
one at a time, and keeps nothing per record but counters and the first few ids of each kind:

- a record no policy decided (``outcome: error``; a staged flow that ended on possession, with no
  evaluation) is counted apart and never flipped;
- the live policy is evaluated again on the facts: a record whose outcome or reason codes differ is
  *not reproduced* (its facts are not enough to replay it) and counted apart;
- the candidate is evaluated on the same facts, unless it needs a signal the facts cannot answer
  (absent, and the live policy never asked for it; a bounded value never asked at its threshold):
  such a record is *unevaluable*, with what was missing. A signal the live policy asked for and that
  is absent was not observed: ``evaluate`` skips it under both policies alike.

Decisions share few distinct fact sets, so each verdict is memoised by (flow, live hash, facts).
``render`` gives the result as plain text, for a command line to print.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any, NamedTuple

from phoneid.domain.decisions import Kind
from phoneid.domain.evaluation import evaluate
from phoneid.domain.policy import Flow, Policy, Signal
from phoneid.domain.recorded_facts import (
    Compared,
    FactsKey,
    bounds_unknown,
    compared,
    facts_key,
    observations_from,
)

__all__ = [
    "POLICY_FLOWS",
    "Backtest",
    "CodeChange",
    "Flip",
    "Replay",
    "Tally",
    "backtest",
    "policies_by_hash",
    "render",
]

# The policy flow each kind of decision is evaluated under: services/staged.py (complete),
# services/unify.py (unify-status and unify-bind), services/verify/verifier.py (/v3/verify, each
# item of a batch, each Connect row through services/connect/verify_chunk.py).
POLICY_FLOWS: Mapping[str, Flow] = {
    Kind.STAGED.value: "complete",
    Kind.UNIFY.value: "unify",
    Kind.VERIFY.value: "verify",
    Kind.VERIFY_BATCH.value: "verify",
    Kind.CONNECT.value: "verify",
}

DEFAULT_SAMPLES = 5
DEFAULT_CACHE = 50_000  # verdicts memoised, about a kilobyte each with its key
MAX_SIGNAL_LISTS = 1_000  # the lists of signals records show: a few per flow and live policy


class Flip(StrEnum):
    """How a decision changes under the candidate."""

    PASS_TO_FAIL = "pass -> fail"
    FAIL_TO_PASS = "fail -> pass"
    CODES_CHANGED = "fail -> fail, codes changed"


class CodeChange(StrEnum):
    """What a flip does to one reason code."""

    RAISED = "raised"  # pass -> fail: a code the candidate raised
    LIFTED = "lifted"  # fail -> pass: a code the live policy raised and the candidate does not
    ADDED = "added"  # fail -> fail: raised by the candidate only
    REMOVED = "removed"  # fail -> fail: raised by the live policy only


@dataclass(frozen=True)
class Tally:
    count: int
    samples: tuple[str, ...]  # the first ids seen, at most the replay's ``samples``


@dataclass(frozen=True)
class Backtest:
    """What the candidate would have decided. ``read`` = ``not_decided`` + ``decided``; ``decided`` =
    ``evaluated`` + ``unevaluable`` + ``not_reproduced``; ``matrix`` counts the evaluated records by
    (live outcome, candidate outcome)."""

    candidate_version: str
    candidate_hash: str
    read: int
    not_decided: Tally
    decided: int
    evaluated: int
    unevaluable: Tally
    # "signal not recorded: X", "value not recorded: tenureDays at 60", "live policy unknown: H"
    unevaluable_reasons: Mapping[str, Tally]
    not_reproduced: Tally
    matrix: Mapping[tuple[str, str], int]
    flips: Mapping[Flip, Tally]
    codes: Mapping[tuple[CodeChange, int], Tally]  # sorted by change, then code


def policies_by_hash(policies: Iterable[Policy]) -> dict[str, Policy]:
    """The live policies as a replay looks them up: by the content hash each record names."""
    return {policy.content_hash: policy for policy in policies}


class _Verdict(NamedTuple):
    """What one fact set gives under one live policy and the candidate (memoised)."""

    live_outcome: str
    live_codes: tuple[int, ...]
    missing: tuple[str, ...]  # the unevaluable's reasons; empty: evaluated
    cell: tuple[str, str]
    flip: Flip | None
    changes: tuple[tuple[CodeChange, int], ...]


class _Counter:
    """Counts and the first ``samples`` ids per key."""

    def __init__(self, samples: int) -> None:
        self._limit = samples
        self.counts: dict[Any, int] = {}
        self.samples: dict[Any, list[str]] = {}

    def add(self, key: Any, record_id: str) -> None:
        counts = self.counts
        if key in counts:
            counts[key] += 1
            kept = self.samples[key]
            if len(kept) < self._limit:
                kept.append(record_id)
        else:
            counts[key] = 1
            self.samples[key] = [record_id][: self._limit]

    def tally(self, key: Any) -> Tally:
        return Tally(self.counts.get(key, 0), tuple(self.samples.get(key, ())))

    def tallies(self) -> dict[Any, Tally]:
        return {key: self.tally(key) for key in self.counts}


class Replay:
    """A candidate replayed record by record (``add``); ``result`` at any point. The live policies are
    given by content hash; a record whose hash is not among them is unevaluable."""

    def __init__(
        self,
        live: Mapping[str, Policy],
        candidate: Policy,
        *,
        samples: int = DEFAULT_SAMPLES,
        cache_size: int = DEFAULT_CACHE,
    ) -> None:
        self._live = live
        # Each live hash as the mapping holds it: the key a verdict is memoised by (a record's own copy
        # would be one more string per verdict). A policy is looked up by the hash its records name,
        # even if this version hashes its document differently.
        self._hashes = {key: key for key in live}
        self._candidate = candidate
        # Verdicts by (flow, live hash, facts key), least recently used dropped: memory stays bounded.
        self._verdicts = lru_cache(maxsize=cache_size)(self._verdict)
        self._signal_lists: dict[tuple[str, ...], tuple[str, ...]] = {}  # one copy of each, for the keys
        self._read = 0
        self._matrix: dict[tuple[str, str], int] = {}
        self._kinds = _Counter(samples)  # not decided, unevaluable, not reproduced
        self._reasons = _Counter(samples)
        self._flips = _Counter(samples)
        self._codes = _Counter(samples)
        # Signals the candidate needs beyond those each live policy's flow asked for; the thresholds
        # the candidate compares in each flow.
        self._beyond: dict[tuple[str, Flow], frozenset[Signal]] = {}
        self._compared: dict[Flow, Compared] = {}

    def add(self, record: Mapping[str, Any]) -> None:
        self._read += 1
        record_id = record["id"]
        outcome = record["outcome"]
        policy = record.get("policy")
        if outcome == "error" or not policy:
            self._kinds.add("not decided", record_id)
            return
        live_hash = self._hashes.get(policy["hash"])
        flow = POLICY_FLOWS.get(record["kind"])
        if live_hash is None or flow is None:
            why = f"live policy unknown: {policy['hash']}" if flow else f"kind unknown: {record['kind']}"
            self._kinds.add("unevaluable", record_id)
            self._reasons.add(why, record_id)
            return
        facts = record.get("facts") or ()
        signals, values = facts_key(facts)
        kept = self._signal_lists.get(signals)
        if kept is None and len(self._signal_lists) < MAX_SIGNAL_LISTS:
            kept = self._signal_lists[signals] = signals
        verdict = self._verdicts(flow, live_hash, (kept or signals, values))
        codes = record.get("reasonCodes") or ()
        if outcome != verdict.live_outcome or tuple(codes) != verdict.live_codes:
            self._kinds.add("not reproduced", record_id)
        elif verdict.missing:
            self._kinds.add("unevaluable", record_id)
            for why in verdict.missing:
                self._reasons.add(why, record_id)
        else:
            self._matrix[verdict.cell] = self._matrix.get(verdict.cell, 0) + 1
            if verdict.flip is not None:
                self._flips.add(verdict.flip, record_id)
                for change in verdict.changes:
                    self._codes.add(change, record_id)

    @property
    def memoised(self) -> int:
        """How many verdicts are memoised now (at most the cache's size)."""
        return self._verdicts.cache_info().currsize

    def _verdict(self, flow: Flow, live_hash: str, facts: FactsKey) -> _Verdict:
        live = self._live[live_hash]
        observations = observations_from(facts)
        evaluation = evaluate(observations, live, flow)
        live_outcome = "pass" if evaluation.passed else "fail"
        live_codes = tuple(sorted(evaluation.codes))
        beyond = self._beyond.get((live_hash, flow))
        if beyond is None:
            beyond = self._candidate.needed_signals(flow) - live.needed_signals(flow)
            self._beyond[(live_hash, flow)] = beyond
        missing = [f"signal not recorded: {s.value}" for s in sorted(beyond) if s not in observations]
        thresholds = self._compared.get(flow)
        if thresholds is None:
            thresholds = self._compared[flow] = compared(self._candidate, flow)
        missing += [f"value not recorded: {b}" for b in bounds_unknown(observations, thresholds)]
        if missing:
            return _Verdict(live_outcome, live_codes, tuple(missing), (live_outcome, "unevaluable"), None, ())
        candidate = evaluate(observations, self._candidate, flow)
        outcome = "pass" if candidate.passed else "fail"
        raised, lifted = (
            sorted(candidate.codes - evaluation.codes),
            sorted(evaluation.codes - candidate.codes),
        )
        flip: Flip | None = None
        changes: list[tuple[CodeChange, int]] = []
        if live_outcome == "pass" and outcome == "fail":
            flip, changes = Flip.PASS_TO_FAIL, [(CodeChange.RAISED, code) for code in raised]
        elif live_outcome == "fail" and outcome == "pass":
            flip, changes = Flip.FAIL_TO_PASS, [(CodeChange.LIFTED, code) for code in lifted]
        elif raised or lifted:
            flip = Flip.CODES_CHANGED
            changes = [(CodeChange.ADDED, c) for c in raised] + [(CodeChange.REMOVED, c) for c in lifted]
        return _Verdict(live_outcome, live_codes, (), (live_outcome, outcome), flip, tuple(changes))

    def result(self) -> Backtest:
        kinds = self._kinds
        evaluated = sum(self._matrix.values())
        unevaluable, not_reproduced = kinds.tally("unevaluable"), kinds.tally("not reproduced")
        return Backtest(
            candidate_version=self._candidate.version,
            candidate_hash=self._candidate.content_hash,
            read=self._read,
            not_decided=kinds.tally("not decided"),
            decided=evaluated + unevaluable.count + not_reproduced.count,
            evaluated=evaluated,
            unevaluable=unevaluable,
            unevaluable_reasons=dict(
                sorted(self._reasons.tallies().items(), key=lambda i: (-i[1].count, i[0]))
            ),
            not_reproduced=not_reproduced,
            matrix={
                (live, candidate): self._matrix.get((live, candidate), 0)
                for live in ("pass", "fail")
                for candidate in ("pass", "fail")
            },
            flips={flip: self._flips.tally(flip) for flip in Flip if flip in self._flips.counts},
            codes=dict(
                sorted(
                    self._codes.tallies().items(), key=lambda i: (list(CodeChange).index(i[0][0]), i[0][1])
                )
            ),
        )


def backtest(
    records: Iterable[Mapping[str, Any]],
    live: Mapping[str, Policy],
    candidate: Policy,
    *,
    samples: int = DEFAULT_SAMPLES,
    cache_size: int = DEFAULT_CACHE,
) -> Backtest:
    """The candidate replayed over ``records`` (read once, streaming)."""
    replay = Replay(live, candidate, samples=samples, cache_size=cache_size)
    for record in records:
        replay.add(record)
    return replay.result()


def render(result: Backtest, *, width: int = 34) -> str:
    """The result as plain text: totals, the matrix, then each flip and its codes, with sample ids."""
    lines = [
        f"Candidate policy {result.candidate_version} (sha256 {result.candidate_hash[:12]})",
        "",
        _row("records read", result.read, width),
        _row("  not decided by a policy", result.not_decided, width),
        _row("  decided", result.decided, width),
        _row("    evaluated", result.evaluated, width),
        _row("    unevaluable", result.unevaluable, width),
        # A reason may be long (a policy's whole hash): its count first, then the reason.
        *(
            f"{tally.count:>{width + 12},}  {why}{_samples(tally)}"
            for why, tally in result.unevaluable_reasons.items()
        ),
        _row("    not reproduced", result.not_reproduced, width),
        "",
        "live \\ candidate".ljust(width) + f"{'pass':>12}{'fail':>12}",
    ]
    for live in ("pass", "fail"):
        counts = (result.matrix.get((live, candidate), 0) for candidate in ("pass", "fail"))
        lines.append(f"{live:<{width}}" + "".join(f"{count:>12,}" for count in counts))
    changes = {CodeChange.RAISED: Flip.PASS_TO_FAIL, CodeChange.LIFTED: Flip.FAIL_TO_PASS}
    for flip, tally in result.flips.items():
        lines += ["", _row(flip.value, tally, width)]
        for (change, code), counted in result.codes.items():
            if changes.get(change, Flip.CODES_CHANGED) == flip:
                lines.append(_row(f"  {code} {change.value}", counted, width))
    if not result.flips:
        lines += ["", "No decision changes under the candidate."]
    return "\n".join(lines) + "\n"


def _row(label: str, counted: Tally | int, width: int) -> str:
    if isinstance(counted, int):
        return f"{label:<{width}}{counted:>12,}"
    return f"{label:<{width}}{counted.count:>12,}{_samples(counted)}"


def _samples(counted: Tally) -> str:
    return f"  e.g. {', '.join(counted.samples)}" if counted.samples else ""
