"""A decision history as JSON Lines: N records as ``GET /v3/decisions/{id}`` shows them (``_view``),
with facts drawn from a seeded, mostly clean mix over the default policy's signals.

Decisions share few distinct fact sets: most numbers are clean, and the rest differ in a signal or
two. The history draws from a pool of ``distinct`` fact sets (made, evaluated and shown once each,
the first ones far more often than the last), and gives a ``unique`` share of the records facts of
their own (a SIM swapped a fractional number of hours ago), which no cache holds. Each fact set's
outcome, codes and categories come from the live policy's own evaluation, and its record from the
service's ``DecisionRecord.evaluated``, ``facts_of`` and ``_view``, as the flows write them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from phoneid.domain.decisions import DecisionRecord, Kind, NumberRef, PossessionAttempts, facts_of, stamp
from phoneid.domain.evaluation import SOURCE_FAILED, evaluate
from phoneid.domain.policy import ALL_FLOWS, Bounds, Flow, Policy, Signal
from phoneid.services.decision_log import policy_ref
from phoneid.services.decisions import _view

S = Signal
T0 = datetime(2026, 11, 1, tzinfo=UTC)
AS_OF = "@AS_OF@"  # the facts' time in a pool entry's line, each record's own put in its place

# Each signal's values that raise nothing under the default policy, and those that may, with their
# weights. A decision's facts are clean but for a signal or two (RISKY: how many, by weight).
CLEAN, RISKY = 0, 1
VALUES: Mapping[Signal, tuple[tuple[tuple[Any, int], ...], tuple[tuple[Any, int], ...]]] = {
    S.POSSESSION: ((("passed", 1),), (("failed", 3), ("pending", 1))),
    S.KEY_MISMATCH: (((False, 1),), ((True, 1),)),
    S.SIM_SWAP_HOURS_AGO: (((None, 85), (9000.0, 10), (400.0, 5)), ((30.0, 1), (10.0, 1), (2.0, 1))),
    S.PORT_HOURS_AGO: (((None, 90), (20000.0, 10)), ((48.0, 1), (5.0, 1))),
    S.CALL_FORWARDING: (((False, 1),), ((True, 1),)),
    S.NUMBER_RECYCLED: (((False, 1),), ((True, 1),)),
    S.KYC_NAME_MATCH: ((("true", 90), ("partial", 10)), (("false", 1),)),
    S.KYC_ELEMENTS_SUPPLIED: (((4, 60), (2, 30), (0, 10)), ((4, 1),)),
    S.KYC_ELEMENTS_UNCONFIRMED: (((0, 1),), ((1, 3), (2, 1))),
    S.SECONDARY_SOURCE_MISMATCHES: (((0, 1),), ((1, 1),)),
    S.SOURCES_WITH_MISMATCH: (((0, 90), (1, 10)), ((2, 1),)),
    S.NETWORK_REACHABLE: (((True, 1),), ((False, 1),)),
    S.LINE_TYPE: ((("mobile", 95), ("voip-fixed", 5)), (("voip", 2), ("voip-nonfixed", 1))),
    S.LINE_TYPE_REGISTRY: (((None, 95), ("mobile", 5)), (("landline", 1),)),
    S.PUBLIC_SMS: (((False, 1),), ((True, 1),)),
    S.SIM_TRUST_SCORE: (((None, 30), (90, 30), (70, 20), (45, 12), (35, 8)), ((20, 1),)),
    S.BOT_LINKED: (((False, 1),), ((True, 1),)),
    S.AML_LISTED: (((False, 1),), ((True, 1),)),
    S.SSN_ISSUED_BEFORE_BIRTH: (((False, 1),), ((True, 1),)),
    S.CLAIMED_ADDRESS_CORRECTIONAL: (((False, 1),), ((True, 1),)),
    S.NUMBER_ADDRESS_CORRECTIONAL: (((False, 1),), ((True, 1),)),
    S.IDENTITY_DECEASED: (((False, 1),), ((True, 1),)),
    S.NUMBER_OWNER_DECEASED: (((False, 1),), ((True, 1),)),
    S.ACTIVE_IDENTITY: (((True, 1),), ((False, 1),)),
    S.ANY_INFORMATION: (((True, 1),), ((False, 1),)),
    S.IDENTITIES_ON_NUMBER: (((1, 85), (2, 10), (0, 5)), ((3, 1),)),
    S.SHORT_TENURE_IDENTITIES_ON_NUMBER: (((0, 90), (1, 10)), ((2, 3), (3, 1), (5, 1))),
    S.DAYS_SINCE_ASSOCIATION: (((800, 50), (120, 30), (20, 20)), ((800, 1),)),
    S.DISCONNECT_SINCE_ASSOCIATION: (((False, 1),), ((True, 1),)),
    S.PRIOR_ACTIVITY: (((3, 60), (1, 40)), ((0, 1),)),
    S.RECENT_CHECKS: (((0, 70), (1, 20), (4, 7), (6, 3)), ((12, 1),)),
    S.RECENT_CHECKS_SHARING_ATTRIBUTES: (((0, 90), (2, 10)), ((6, 1),)),
    S.NUMBER_CHANGE_EVENTS: (((0, 90), (1, 10)), ((4, 1),)),
    S.PARTNER_FINDINGS: (((frozenset(), 1),), ((frozenset({9135}), 2), (frozenset({9176, 9201}), 1))),
    S.TENURE_DAYS: (((True, 1),), ((False, 1),)),  # held since 90 days ago? (30 days: mostly yes)
}
RISKY_SIGNALS = ((0, 80), (1, 16), (2, 4))
MATCHES = (S.SSN_MATCH, S.DOB_MATCH, S.NAME_MATCH, S.ADDRESS_MATCH)
FAILED_SHARE = 0.002  # a signal's source failed or timed out
KINDS: Mapping[Flow, tuple[Kind, ...]] = {
    "complete": (Kind.STAGED,),
    "unify": (Kind.UNIFY,),
    "verify": (Kind.VERIFY, Kind.VERIFY, Kind.VERIFY_BATCH, Kind.CONNECT, Kind.CONNECT),
}
FLOW_WEIGHTS = (35, 10, 55)  # complete, unify, verify


def _pick(rng: random.Random, choices: tuple[tuple[Any, int], ...]) -> Any:
    values, weights = zip(*choices, strict=True)
    return rng.choices(values, weights)[0]


def observations(rng: random.Random, policy: Policy, flow: Flow, *, unique: bool) -> dict[Signal, Any]:
    """One decision's observations of what ``flow`` asks, and what the flow itself knows: clean values
    but for a signal or two, a source failed now and then."""
    wanted = [s for s in sorted(policy.needed_signals(flow) | {S.POSSESSION, S.KEY_MISMATCH}) if s in VALUES]
    risky = set(rng.sample(wanted, _pick(rng, RISKY_SIGNALS)))
    observed: dict[Signal, Any] = {}
    if flow == "complete" or rng.random() < 0.7:  # verify names the person in most requests
        found = rng.random() < 0.96
        observed[S.IDENTITY_FOUND] = found
        if found:
            mismatched = rng.choices((0, 1, 2), (97, 2, 1))[0]
            observed[S.IDENTITY_MISMATCHES] = mismatched
            observed[S.IDENTITY_CONFIRMED_ELEMENTS] = 0 if mismatched else rng.choice((2, 3, 4))
            for signal in MATCHES[: rng.randint(1, 4)]:
                observed[signal] = "mismatch" if mismatched and rng.random() < 0.5 else "match"
    for signal in wanted:
        if (signal == S.POSSESSION and flow == "verify") or (signal == S.KEY_MISMATCH and flow != "unify"):
            continue
        if signal not in (S.POSSESSION, S.KEY_MISMATCH) and rng.random() < FAILED_SHARE:
            observed[signal] = SOURCE_FAILED
        elif signal == S.TENURE_DAYS:
            held = _pick(rng, VALUES[signal][RISKY if signal in risky else CLEAN])
            low, high = policy.thresholds(signal)  # the default's: 30 and 90 days
            observed[signal] = Bounds({low: held or rng.random() < 0.5, high: held})
        else:
            observed[signal] = _pick(rng, VALUES[signal][RISKY if signal in risky else CLEAN])
    if unique and observed.get(S.SIM_SWAP_HOURS_AGO) is not SOURCE_FAILED:
        observed[S.SIM_SWAP_HOURS_AGO] = round(rng.uniform(0, 2000), 6)
    return observed


@dataclass(frozen=True)
class Shown:
    """A fact set's record as a JSON line, but for its id and times."""

    kind: Kind
    body: str  # the record's JSON from its first field after the times, facts' asOf left as AS_OF


def shown(rng: random.Random, policy: Policy, *, unique: bool = False) -> Shown:
    """One decision of a random flow and kind, evaluated by ``policy`` and shown as the API does."""
    flow: Flow = rng.choices(ALL_FLOWS, FLOW_WEIGHTS)[0]
    kind = rng.choice(KINDS[flow])
    observed = observations(rng, policy, flow, unique=unique)
    staged = kind in (Kind.STAGED, Kind.UNIFY)
    record = DecisionRecord.evaluated(
        evaluate(observed, policy, flow),
        id="",
        client_id="client-1",
        tier="production",
        region="US",
        kind=kind,
        flow=rng.choice(("desktop", "mobile")) if staged else "verifiedUser",
        started_at=T0,
        ended_at=T0,
        step="complete" if kind == Kind.STAGED else "unify-status" if staged else None,
        policy=policy_ref(policy),
        facts=facts_of(observed),
        facts_at=T0,
        possession=PossessionAttempts(status="passed", method="otp", sms_sent=1, otp_entries=1)
        if staged
        else None,
        number=NumberRef("mac", "US", f"{rng.randint(0, 99):02d}"),
    )
    return _body(kind, json.loads(_view(record).model_dump_json()))


def not_decided(rng: random.Random) -> Shown:
    """A verification item refused before a decision, or a staged flow that ended on possession."""
    if rng.random() < 0.5:
        view = {"kind": "verify-batch", "flow": "verifiedUser", "outcome": "error", "success": False}
        return _body(Kind.VERIFY_BATCH, view | {"errorCode": 8001, "tier": "production", "region": "US"})
    view = {"kind": "staged", "flow": "mobile", "outcome": "fail", "success": False, "step": "validate"}
    return _body(
        Kind.STAGED, view | {"tier": "production", "region": "US", "possession": {"status": "failed"}}
    )


def _body(kind: Kind, view: dict[str, Any]) -> Shown:
    for field in ("id", "startedAt", "endedAt"):
        view.pop(field, None)
    for fact in view.get("facts") or ():
        fact["asOf"] = AS_OF
    return Shown(kind, json.dumps(view, separators=(",", ":")))


def lines(
    count: int, policies: tuple[Policy, ...], *, distinct: int, unique: float, seed: int
) -> Iterator[str]:
    """``count`` records as JSON lines: 1% not decided by a policy, ``unique`` with facts of their own,
    the rest from a pool of ``distinct`` fact sets, each decided by one of ``policies`` (the first
    decides four in five)."""
    rng = random.Random(seed)
    weights = [4] + [1] * (len(policies) - 1)
    pool = [shown(rng, rng.choices(policies, weights)[0]) for _ in range(distinct)]
    for n in range(count):
        draw = rng.random()
        if draw < 0.01:
            entry = not_decided(rng)
        elif draw < 0.01 + unique:
            entry = shown(rng, rng.choices(policies, weights)[0], unique=True)
        else:
            entry = pool[int(len(pool) * rng.random() ** 4)]  # the first sets far more often
        started = T0 + timedelta(milliseconds=n * 2_000)
        ended = stamp(started + timedelta(milliseconds=1_500))
        record_id = f"{n:032x}" if entry.kind != Kind.CONNECT else f"{n // 1000:032x}#{n % 1000 + 2}"
        head = f'{{"id":"{record_id}","startedAt":"{stamp(started)}","endedAt":"{ended}",'
        yield head + entry.body[1:].replace(AS_OF, ended) + "\n"


def write(
    path: Path, count: int, policies: tuple[Policy, ...], *, distinct: int, unique: float, seed: int
) -> int:
    """The history written to ``path``; its size in bytes."""
    with path.open("w", encoding="utf-8") as out:
        for line in lines(count, policies, distinct=distinct, unique=unique, seed=seed):
            out.write(line)
    return path.stat().st_size
