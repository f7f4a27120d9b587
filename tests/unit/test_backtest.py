"""A candidate policy replayed over past decision records: the live policy reproduced, the candidate's
outcome matrix, its flips by reason code with sample ids, and the records it cannot judge named."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from phoneid.domain.backtest import (
    POLICY_FLOWS,
    Backtest,
    CodeChange,
    Flip,
    Replay,
    Tally,
    backtest,
    policies_by_hash,
    render,
)
from phoneid.domain.decisions import DecisionRecord, Kind, facts_of
from phoneid.domain.evaluation import SOURCE_FAILED, default_policy, evaluate
from phoneid.domain.policy import ALL_FLOWS, Bounds, Flow, Policy, Signal, parse_policy
from phoneid.domain.recorded_facts import observations_of
from phoneid.services.decision_log import policy_ref
from phoneid.services.decisions import _view

DEFAULT = Path(__file__).resolve().parents[2] / "layers/core/phoneid/policy/default.yaml"
FAILED = {"sourceFailed": True}
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def policy_with(*changes: Callable[[dict[str, Any]], None], version: str = "candidate") -> Policy:
    """The default policy with ``changes`` made to its document."""
    document: dict[str, Any] = copy.deepcopy(yaml.safe_load(DEFAULT.read_text()))
    document["version"] = version
    for change in changes:
        change(document)
    return parse_policy(document)


def rule(code: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        found = next(r for r in document["rules"] if r["code"] == code)
        found.update(fields)

    return change


def threshold(code: int, **tests: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        next(r for r in document["rules"] if r["code"] == code)["when"][0].update(tests)

    return change


LIVE = default_policy()
# Tightens the SIM trust rule (below 30 -> below 50), loosens the SIM swap rule (24 hours -> 6).
CANDIDATE = policy_with(threshold(9133, below=50), threshold(9135, below=6))


def shown(
    record_id: str,
    kind: str,
    outcome: str,
    codes: list[int] | None = None,
    policy: Policy | None = LIVE,
    **facts: Any,
) -> dict[str, Any]:
    """A record as ``GET /v3/decisions/{id}`` shows it, JSON-decoded (the fields a replay reads, and a
    few it does not)."""
    record: dict[str, Any] = {
        "id": record_id,
        "kind": kind,
        "flow": "verifiedUser",
        "outcome": outcome,
        "success": outcome == "pass",
        "tier": "production",
        "region": "US",
    }
    if codes:
        record["reasonCodes"] = codes
    if policy is not None:
        record["policy"] = {"id": "default", "version": policy.version, "hash": policy.content_hash}
    if facts:
        record["facts"] = [
            {"signal": s, "value": v, "source": "x", "asOf": "2026-11-30T09:00:00.000Z"}
            for s, v in sorted(facts.items())
        ]
    return record


HISTORY = [
    shown("r01", "verify", "pass", simTrustScore=80, simSwapHoursAgo=100.0),
    shown("r02", "verify", "pass", simTrustScore=40),
    shown("r03", "staged", "pass", simTrustScore=45, possession="passed"),
    shown("r04", "verify", "fail", [9135], simSwapHoursAgo=12.5),
    shown("r05", "unify", "fail", [9135], simSwapHoursAgo=3.0, keyMismatch=False),
    shown("r06", "verify", "fail", [9135], simSwapHoursAgo=12.0, simTrustScore=40),
    shown("r07", "connect", "fail", [9135, 9201], simSwapHoursAgo=20.0, amlListed=FAILED),
    shown("r08", "verify-batch", "pass", simTrustScore=FAILED),
    shown("r09", "verify-batch", "error", policy=None),
    shown("r10", "staged", "fail", policy=None),
    shown("r11", "verify", "pass", policy=policy_with(version="retired"), simTrustScore=80),
    shown("r12", "verify", "pass", simSwapHoursAgo=2.0),
    shown("r13", "verify", "fail", [9133], simTrustScore=10),
]


def test_a_small_history_gives_the_hand_computed_matrix_flips_and_totals() -> None:
    # Given thirteen records: eight that flip or not, two no policy decided, one decided by a policy
    # that is not given, one whose recorded outcome its facts do not give
    # When the candidate is replayed over them
    result = backtest(HISTORY, policies_by_hash([LIVE]), CANDIDATE)

    # Then the counts add up as a reader expects
    assert (result.read, result.decided, result.evaluated) == (13, 11, 9)
    assert result.not_decided == Tally(2, ("r09", "r10"))
    assert result.not_reproduced == Tally(1, ("r12",))
    retired = policy_with(version="retired").content_hash
    assert result.unevaluable == Tally(1, ("r11",))
    assert result.unevaluable_reasons == {f"live policy unknown: {retired}": Tally(1, ("r11",))}
    # And the matrix counts live x candidate outcomes
    assert result.matrix == {
        ("pass", "pass"): 2,
        ("pass", "fail"): 2,
        ("fail", "pass"): 1,
        ("fail", "fail"): 4,
    }
    # And each flip is counted by code, with the first ids seen
    assert result.flips == {
        Flip.PASS_TO_FAIL: Tally(2, ("r02", "r03")),
        Flip.FAIL_TO_PASS: Tally(1, ("r04",)),
        Flip.CODES_CHANGED: Tally(2, ("r06", "r07")),
    }
    assert result.codes == {
        (CodeChange.RAISED, 9133): Tally(2, ("r02", "r03")),
        (CodeChange.LIFTED, 9135): Tally(1, ("r04",)),
        (CodeChange.ADDED, 9133): Tally(1, ("r06",)),
        (CodeChange.REMOVED, 9135): Tally(2, ("r06", "r07")),
    }


def test_the_rendering_shows_totals_matrix_and_flips_with_samples() -> None:
    # Given the small history replayed
    result = backtest(HISTORY, policies_by_hash([LIVE]), CANDIDATE)

    # When it is rendered for a command line
    lines = [line.rstrip() for line in render(result).splitlines()]

    # Then a reader sees the candidate, the totals, the matrix and each flip's codes with ids
    assert lines[0] == f"Candidate policy candidate (sha256 {CANDIDATE.content_hash[:12]})"
    assert "records read                                13" in lines
    assert "  not decided by a policy                    2  e.g. r09, r10" in lines
    assert "    not reproduced                           1  e.g. r12" in lines
    retired = policy_with(version="retired").content_hash
    assert (
        f"                                             1  live policy unknown: {retired}  e.g. r11" in lines
    )
    assert "live \\ candidate                          pass        fail" in lines
    assert "pass                                         2           2" in lines
    assert "fail                                         1           4" in lines
    flips = lines[lines.index("fail                                         1           4") + 1 :]
    assert flips == [
        "",
        "pass -> fail                                 2  e.g. r02, r03",
        "  9133 raised                                2  e.g. r02, r03",
        "",
        "fail -> pass                                 1  e.g. r04",
        "  9135 lifted                                1  e.g. r04",
        "",
        "fail -> fail, codes changed                  2  e.g. r06, r07",
        "  9133 added                                 1  e.g. r06",
        "  9135 removed                               2  e.g. r06, r07",
    ]


def test_samples_are_the_first_ids_seen_up_to_the_limit() -> None:
    # Given seven records the candidate fails, in order
    records = [shown(f"d{n}", "verify", "pass", simTrustScore=40) for n in range(7)]

    # When replayed with the default number of samples, and with two
    result = backtest(records, policies_by_hash([LIVE]), CANDIDATE)
    fewer = backtest(records, policies_by_hash([LIVE]), CANDIDATE, samples=2)

    # Then every record counts, and only the first ids are kept
    assert result.flips[Flip.PASS_TO_FAIL] == Tally(7, ("d0", "d1", "d2", "d3", "d4"))
    assert fewer.codes[(CodeChange.RAISED, 9133)] == Tally(7, ("d0", "d1"))


def test_each_kind_of_decision_is_replayed_under_the_flow_that_decided_it() -> None:
    # Given a policy rule of the staged flow only (9011: an identity confirmed by fewer than 2 elements)
    facts: dict[str, Any] = {"identityFound": True, "identityMismatches": 0, "identityConfirmedElements": 1}
    records = [
        shown("s", "staged", "fail", [9011], **facts),
        *(shown(kind, kind, "pass", **facts) for kind in ("unify", "verify", "verify-batch", "connect")),
    ]

    # When the live policy is replayed over a record of each kind
    result = backtest(records, policies_by_hash([LIVE]), LIVE)

    # Then each is reproduced: the staged flow raises 9011, the others do not
    assert POLICY_FLOWS == {
        "staged": "complete",
        "unify": "unify",
        "verify": "verify",
        "verify-batch": "verify",
        "connect": "verify",
    }
    assert (result.evaluated, result.not_reproduced.count) == (5, 0)


# --- records made the way the service makes them ----------------------------------------------


def values_tested(policy: Policy, signal: Signal) -> list[Any]:
    """Values of ``signal`` on both sides of every test the policy makes of it."""
    values: list[Any] = [None]
    for found in policy.rules:
        for condition in found.when:
            if condition.signal != signal:
                continue
            for option in (condition.is_, *(condition.in_ or ())):
                if isinstance(option, bool):
                    values += [True, False]
                elif isinstance(option, int):
                    values += [option, option + 1]
                elif option is not None:
                    values += [option, "other"]
            for edge in condition.thresholds():
                values += [int(edge) - 1, int(edge), edge + 0.5]
    return values


def observed(rng: random.Random, policy: Policy, flow: Flow) -> dict[Signal, Any]:
    """Varied observations of the signals ``flow`` asks for: few or most of them observed, some failed."""
    observations: dict[Signal, Any] = {}
    absent = rng.choice((0.1, 0.6, 0.95))
    for signal in sorted(policy.needed_signals(flow)):
        draw = rng.random()
        if draw < absent:
            continue
        if draw < absent + 0.03:
            observations[signal] = SOURCE_FAILED
        elif signal == Signal.TENURE_DAYS:
            observations[signal] = Bounds({t: rng.random() < 0.7 for t in policy.thresholds(signal)})
        elif signal == Signal.PARTNER_FINDINGS:
            observations[signal] = frozenset(rng.sample([9132, 9135, 9176, 9201], rng.randint(0, 2)))
        else:
            observations[signal] = rng.choice(values_tested(policy, signal))
    return observations


KINDS: dict[Flow, tuple[Kind, ...]] = {
    "complete": (Kind.STAGED,),
    "unify": (Kind.UNIFY,),
    "verify": (Kind.VERIFY, Kind.VERIFY_BATCH, Kind.CONNECT),
}


def service_records(policy: Policy, count: int, seed: int) -> Iterator[dict[str, Any]]:
    """Records as the flows write them (``DecisionRecord.evaluated``, ``facts_of``) and as the API
    shows them (``_view``, through JSON)."""
    rng = random.Random(seed)
    for n in range(count):
        flow = ALL_FLOWS[n % 3]
        observations = observed(rng, policy, flow)
        record = DecisionRecord.evaluated(
            evaluate(observations, policy, flow),
            id=f"dec-{n}",
            client_id="client-1",
            tier="production",
            region="US",
            kind=rng.choice(KINDS[flow]),
            flow="verifiedUser",
            started_at=T0 + timedelta(seconds=n),
            ended_at=T0 + timedelta(seconds=n, milliseconds=900),
            policy=policy_ref(policy),
            facts=facts_of(observations),
            facts_at=T0 + timedelta(seconds=n, milliseconds=800),
        )
        yield json.loads(_view(record).model_dump_json())


def test_the_live_policy_replayed_as_the_candidate_flips_nothing() -> None:
    # Given 600 records the default policy decided on varied observations, as the API shows them
    records = list(service_records(LIVE, 600, seed=7))

    # When the default policy is replayed as the candidate
    result = backtest(records, policies_by_hash([LIVE]), LIVE)

    # Then every record is reproduced and evaluated, and nothing flips
    assert (result.read, result.decided, result.evaluated) == (600, 600, 600)
    assert result.not_reproduced.count == 0
    assert result.unevaluable.count == 0
    assert result.flips == {}
    assert result.codes == {}
    assert result.matrix[("pass", "fail")] == result.matrix[("fail", "pass")] == 0
    # And both outcomes occur, so the replay judged something
    assert result.matrix[("pass", "pass")] > 0
    assert result.matrix[("fail", "fail")] > 0


def test_a_small_cache_gives_the_same_result_as_a_large_one() -> None:
    # Given records the default policy decided
    records = list(service_records(LIVE, 300, seed=11))

    # When the candidate is replayed with a cache of one verdict, and with the default cache
    small = backtest(records, policies_by_hash([LIVE]), CANDIDATE, cache_size=1)
    large = backtest(records, policies_by_hash([LIVE]), CANDIDATE)
    bounded = Replay(policies_by_hash([LIVE]), CANDIDATE, cache_size=1)
    for record in records:
        bounded.add(record)

    # Then both give the same result, and the small cache holds one verdict at most
    assert small == large
    assert large.not_reproduced.count == 0
    assert large.flips[Flip.PASS_TO_FAIL].count > 0
    assert bounded.memoised == 1
    assert bounded.result() == large


@pytest.mark.parametrize("seed", range(5))
def test_recorded_facts_read_back_give_the_same_observations_and_evaluation(seed: int) -> None:
    # Given many varied observations of each flow
    rng = random.Random(seed)
    for n in range(200):
        flow = ALL_FLOWS[n % 3]
        observations = observed(rng, LIVE, flow)

        # When they are kept as a record keeps them, through JSON, and read back
        facts = json.loads(json.dumps(facts_of(observations)))
        read_back = observations_of(facts)

        # Then they are the same observations, and the policy judges them the same
        assert read_back == observations
        assert evaluate(read_back, LIVE, flow) == evaluate(observations, LIVE, flow)


def test_a_bool_and_a_number_of_the_same_signal_are_judged_apart() -> None:
    # Given two records alike but for publicSms: true (raises 9132) and 1 (a number: does not)
    records = [
        shown("bool", "verify", "fail", [9132], publicSms=True),
        shown("number", "verify", "pass", publicSms=1),
    ]

    # When the live policy is replayed over both
    result = backtest(records, policies_by_hash([LIVE]), LIVE)

    # Then both are reproduced
    assert (result.evaluated, result.not_reproduced.count) == (2, 0)


# --- what the candidate cannot judge ----------------------------------------------------------


def test_a_candidate_needing_a_signal_the_live_policy_never_asked_for_leaves_those_records_unevaluable() -> (
    None
):
    # Given a live policy with the SIM trust rule off (its list was never asked) and its records
    live = policy_with(rule(9133, action="off"), version="no-sim-trust")
    records = list(service_records(live, 90, seed=3))
    # And a record of it whose facts hold the signal anyway
    records.append(shown("extra", "verify", "pass", policy=live, simTrustScore=10))

    # When the default policy, which tests simTrustScore, is the candidate
    result = backtest(records, policies_by_hash([live]), LIVE)

    # Then the records without it are unevaluable, the signal named with their count and first ids
    assert result.unevaluable == Tally(90, ("dec-0", "dec-1", "dec-2", "dec-3", "dec-4"))
    assert result.unevaluable_reasons == {
        "signal not recorded: simTrustScore": Tally(90, ("dec-0", "dec-1", "dec-2", "dec-3", "dec-4"))
    }
    # And the one that holds it is evaluated: the candidate raises 9133 on it
    assert result.evaluated == 1
    assert result.flips == {Flip.PASS_TO_FAIL: Tally(1, ("extra",))}


def test_a_signal_the_live_policy_asked_for_and_did_not_observe_is_evaluable() -> None:
    # Given a record with no SIM swap observed (the live policy asked; the carrier had nothing)
    records = [shown("quiet", "verify", "pass", simTrustScore=80)]

    # When a candidate tightening the SIM swap rule is replayed
    result = backtest(records, policies_by_hash([LIVE]), policy_with(threshold(9135, below=72)))

    # Then the record is evaluated and does not flip: the rule is skipped under both
    assert (result.evaluated, result.unevaluable.count) == (1, 0)
    assert result.matrix[("pass", "pass")] == 1


def test_a_tenure_threshold_the_carrier_was_never_asked_about_is_not_guessed() -> None:
    # Given records whose tenure the carrier answered at the live thresholds, 30 and 90 days
    records = [
        shown("short", "verify", "fail", [9161], tenureDays="Bounds({30.0: False, 90.0: False})"),
        shown("long", "verify", "pass", tenureDays="Bounds({30.0: True, 90.0: True})"),
    ]

    # When the candidate compares tenure with 60 days, and another with 90 only
    at_60 = backtest(records, policies_by_hash([LIVE]), policy_with(threshold(9161, below=60)))
    at_90 = backtest(records, policies_by_hash([LIVE]), policy_with(threshold(9161, below=90)))

    # Then at 60 neither record can be judged, named by the threshold; at 90 both can
    assert at_60.unevaluable_reasons == {"value not recorded: tenureDays at 60": Tally(2, ("short", "long"))}
    assert at_90.evaluated == 2
    assert at_90.flips == {}


def test_fail_closed_and_fail_open_rules_treat_a_failed_source_as_the_live_policy_did() -> None:
    # Given records whose AML list (fail closed) and SIM trust list (fail open) did not answer
    records = [
        shown("aml", "verify", "fail", [9201], amlListed=FAILED, simTrustScore=80),
        shown("trust", "staged", "pass", simTrustScore=FAILED, amlListed=False),
    ]

    # When the live policy is replayed, and a candidate that turns both the other way
    same = backtest(records, policies_by_hash([LIVE]), LIVE)
    turned = policy_with(rule(9201, onSourceFailure="skip"), rule(9133, onSourceFailure="fail"))
    flipped = backtest(records, policies_by_hash([LIVE]), turned)

    # Then the live policy is reproduced: the AML record fails with 9201, the SIM trust one passes
    assert same.matrix == {("pass", "pass"): 1, ("pass", "fail"): 0, ("fail", "pass"): 0, ("fail", "fail"): 1}
    assert same.not_reproduced.count == 0
    # And the candidate flips both, each by the rule that changed
    assert flipped.codes == {
        (CodeChange.RAISED, 9133): Tally(1, ("trust",)),
        (CodeChange.LIFTED, 9201): Tally(1, ("aml",)),
    }


def test_an_empty_history_renders_with_nothing_changed() -> None:
    # Given no record
    result: Backtest = backtest([], policies_by_hash([LIVE]), CANDIDATE)

    # Then nothing is counted, and the rendering says nothing changes
    assert (result.read, result.decided, result.evaluated) == (0, 0, 0)
    assert render(result).endswith("No decision changes under the candidate.\n")


def test_a_live_policy_is_found_by_the_hash_its_records_name() -> None:
    # Given records naming their policy by a hash another version of the code gave the document
    records = [shown("old", "verify", "fail", [9133], simTrustScore=10)]
    records[0]["policy"]["hash"] = "a" * 64

    # When the live policy is given under that hash
    result = backtest(records, {"a" * 64: LIVE}, CANDIDATE)

    # Then the records are replayed under it
    assert (result.evaluated, result.unevaluable.count, result.not_reproduced.count) == (1, 0, 0)


def test_a_record_of_a_kind_no_flow_evaluates_is_unevaluable_and_named() -> None:
    # Given a record of a kind this version does not know
    records = [shown("new", "voice", "pass", simTrustScore=80)]

    # When the candidate is replayed over it
    result = backtest(records, policies_by_hash([LIVE]), CANDIDATE)

    # Then it is unevaluable, its kind named
    assert result.unevaluable_reasons == {"kind unknown: voice": Tally(1, ("new",))}
    assert result.decided == 1
