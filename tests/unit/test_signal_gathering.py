"""Gathering the fraud policy's signals: each source's answer becomes its signal, a failing or slow
source gives SOURCE_FAILED for its own signals only, sources are asked at once, the activity log is
read before the check is recorded, and only what the policy needs is asked. Sandbox users' signals
are scripted in the catalogue."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from datetime import date, datetime, timedelta
from importlib import resources
from typing import Any

import pytest
import yaml

from phoneid.domain.evaluation import SOURCE_FAILED, Category, default_policy, evaluate
from phoneid.domain.identity import Address, Claimed, Identity
from phoneid.domain.policy import Bounds, Policy, Signal, parse_policy
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.session import Possession
from phoneid.domain.signals import (
    KycAnswer,
    KycClaim,
    KycResult,
    ListEntry,
    ListKind,
    NumberHistory,
    SignalSourceError,
)
from phoneid.services.signals import SANDBOX_DEFAULTS, ScriptedSignals, Subject
from tests.fakes import START, FakeClock, InMemoryActivityLog, InMemoryIdentityStore, InMemorySignalLists
from tests.unit.helpers import identity, production_signals

S = Signal
NOW = START  # the FakeClock's time: 2026-11-22 12:00 UTC


# --- fake carrier ports ---------------------------------------------------------------------------


class ScriptedSimSwap:
    def __init__(self, latest: datetime | None) -> None:
        self.latest = latest
        self.asked: list[str] = []

    def latest_change(self, phone_number: str) -> datetime | None:
        self.asked.append(phone_number)
        return self.latest


class ScriptedCallForwarding:
    def __init__(self, forwarding: bool) -> None:
        self.forwarding = forwarding
        self.asked: list[str] = []

    def unconditional(self, phone_number: str) -> bool:
        self.asked.append(phone_number)
        return self.forwarding


class ScriptedTenure:
    """The subscriber has held the number since ``held_from``."""

    def __init__(self, held_from: date) -> None:
        self.held_from = held_from
        self.asked: list[tuple[str, date]] = []

    def held_since(self, phone_number: str, since: date) -> bool:
        self.asked.append((phone_number, since))
        return self.held_from <= since


class ScriptedRecycling:
    def __init__(self, recycled: bool) -> None:
        self.recycled = recycled
        self.asked: list[tuple[str, date]] = []

    def recycled_since(self, phone_number: str, since: date) -> bool:
        self.asked.append((phone_number, since))
        return self.recycled


class ScriptedKyc:
    def __init__(self, **answers: KycAnswer) -> None:
        self.answers = answers
        self.claims: list[KycClaim] = []

    def match(self, phone_number: str, claim: KycClaim) -> KycResult:
        self.claims.append(claim)
        return KycResult(self.answers)


class ScriptedDeviceStatus:
    def __init__(self, reachable: bool) -> None:
        self.is_reachable = reachable

    def reachable(self, phone_number: str) -> bool:
        return self.is_reachable

    def roaming_country(self, phone_number: str) -> str | None:
        return None


class FailingSimSwap:
    def latest_change(self, phone_number: str) -> datetime | None:
        raise SignalSourceError("CAMARA SIM Swap answered 503")


class BlockedSimSwap:
    """Answers only once the test releases it: a source slower than any timeout."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()

    def latest_change(self, phone_number: str) -> datetime | None:
        self.entered.set()
        # A safety net so a broken gatherer cannot hang the suite; the test releases it sooner.
        self.release.wait(timeout=10)
        self.finished.set()
        return NOW - timedelta(hours=1)


class MeetingSimSwap:
    """Answers only when the call forwarding source is being asked at the same time."""

    def __init__(self, barrier: threading.Barrier) -> None:
        self.barrier = barrier

    def latest_change(self, phone_number: str) -> datetime | None:
        self.barrier.wait()
        return NOW - timedelta(hours=2)


class MeetingCallForwarding:
    def __init__(self, barrier: threading.Barrier) -> None:
        self.barrier = barrier

    def unconditional(self, phone_number: str) -> bool:
        self.barrier.wait()
        return True


class Untouchable:
    """A port no one may call: every call is recorded (and refused), so the test can show none came."""

    def __init__(self, name: str, calls: list[str]) -> None:
        self._name = name
        self._calls = calls

    def __getattr__(self, method: str) -> Callable[..., Any]:
        def called(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(f"{self._name}.{method}")
            raise AssertionError(f"{self._name}.{method} must not be asked")

        return called


class AmlListDown(InMemorySignalLists):
    """The operator's lists, with the AML watch list unreachable."""

    def lookup(self, kind: ListKind, keys: Any) -> dict[str, ListEntry]:
        if kind == ListKind.AML:
            raise SignalSourceError("aml list unavailable")
        return super().lookup(kind, keys)


class AssociatedSince:
    """Identity Manager: the number has been tied to one identity since ``first``."""

    def __init__(self, first: date) -> None:
        self.first = first

    def history(self, client_id: str, phone_number: str, short_tenure_since: datetime) -> NumberHistory:
        associated = datetime(self.first.year, self.first.month, self.first.day, tzinfo=NOW.tzinfo)
        return NumberHistory(
            identities=1, short_tenure_identities=0, first_associated=self.first, last_associated=associated
        )


# --- builders -------------------------------------------------------------------------------------


def subject(phone: str, client_id: str = "client-a", **fields: Any) -> Subject:
    values: dict[str, Any] = {"flow": "complete", "possession": Possession.PASSED}
    values.update(fields)
    return Subject(client_id=client_id, phone_number=phone, **values)


def records(*phones: str, **fields: Any) -> InMemoryIdentityStore:
    """The identity table with a clean identity on each number."""
    return InMemoryIdentityStore(identity(phone, **fields) for phone in phones)


def policy_with(change: Callable[[dict[str, Any]], None]) -> Policy:
    """The default policy document with ``change`` applied, validated as an operator's would be."""
    text = resources.files("phoneid").joinpath("policy/default.yaml").read_text("utf-8")
    document = yaml.safe_load(text)
    change(document)
    return parse_policy(document)


def rule(document: dict[str, Any], code: int) -> dict[str, Any]:
    found: list[dict[str, Any]] = [r for r in document["rules"] if r["code"] == code]
    assert len(found) == 1
    return found[0]


CLAIMED = Claimed(
    first_name="Noor",
    last_name="Haddad",
    dob="1987-06-15",
    ssn="123-45-6789",
    addresses=(Address(address="42 Quarry Road", city="Albany", region="NY", postal_code="12207"),),
)


# --- (a) each carrier answer becomes its signal -----------------------------------------------------


def test_each_carrier_answer_becomes_its_signal() -> None:
    # Given a number whose SIM changed five hours ago, with call forwarding on and the device unreachable
    phone = "+12025550301"
    sim_swap = ScriptedSimSwap(NOW - timedelta(hours=5))
    gatherer = production_signals(
        records(phone),
        FakeClock(),
        sim_swap=sim_swap,
        call_forwarding=ScriptedCallForwarding(True),
        device_status=ScriptedDeviceStatus(False),
    )

    # When the complete flow's signals are gathered
    observed = gatherer.gather(subject(phone), default_policy())

    # Then each answer is its signal, the SIM swap in hours before the clock's now
    assert sim_swap.asked == [phone]
    assert observed[S.SIM_SWAP_HOURS_AGO] == 5.0
    assert observed[S.CALL_FORWARDING] is True
    assert observed[S.NETWORK_REACHABLE] is False
    assert observed[S.POSSESSION] == "passed"
    # and the policy reads them: SIM swap under 24 hours (9135), forwarding (9137)
    assert {9135, 9137} <= evaluate(observed, default_policy()).codes


def test_no_sim_change_known_is_no_sim_swap() -> None:
    # Given a carrier that knows of no SIM change on the number
    phone = "+12025550302"
    gatherer = production_signals(records(phone), FakeClock(), sim_swap=ScriptedSimSwap(None))

    # When gathered
    observed = gatherer.gather(subject(phone), default_policy())

    # Then simSwapHoursAgo is observed as None, which raises nothing
    assert S.SIM_SWAP_HOURS_AGO in observed
    assert observed[S.SIM_SWAP_HOURS_AGO] is None
    assert 9135 not in evaluate(observed, default_policy()).codes


def test_tenure_is_asked_once_per_threshold_the_policy_uses() -> None:
    # Given a subscriber who has held the number since 1 September 2026 (82 days before now)
    phone = "+12025550303"
    tenure = ScriptedTenure(held_from=date(2026, 9, 1))
    gatherer = production_signals(records(phone), FakeClock(), tenure=tenure)

    # When gathered under the default policy (tenure compared with 30 and 90 days)
    observed = gatherer.gather(subject(phone), default_policy())

    # Then the carrier was asked about exactly now - 30 days and now - 90 days, once each
    assert sorted(tenure.asked) == [(phone, date(2026, 8, 24)), (phone, date(2026, 10, 23))]
    assert sorted(since for _, since in tenure.asked) == [
        NOW.date() - timedelta(days=90),
        NOW.date() - timedelta(days=30),
    ]
    # and tenureDays is known as "at least 30, less than 90": 9162, not 9161
    assert observed[S.TENURE_DAYS] == Bounds({30: True, 90: False})
    codes = evaluate(observed, default_policy()).codes
    assert 9162 in codes
    assert 9161 not in codes


def test_recycling_is_asked_since_the_number_was_first_tied_to_an_identity() -> None:
    # Given Identity Manager first tied the number to an identity on 1 March 2024,
    # and the carrier says it was recycled since
    phone = "+12025550304"
    recycling = ScriptedRecycling(True)
    gatherer = production_signals(
        records(phone), FakeClock(), recycling=recycling, history=AssociatedSince(date(2024, 3, 1))
    )

    # When gathered
    observed = gatherer.gather(subject(phone), default_policy())

    # Then the carrier was asked about that date, and the number is observed as recycled
    assert recycling.asked == [(phone, date(2024, 3, 1))]
    assert observed[S.NUMBER_RECYCLED] is True


def test_recycling_is_not_asked_for_a_number_never_tied_to_an_identity() -> None:
    # Given Identity Manager holds nothing for the number
    phone = "+12025550305"
    recycling = ScriptedRecycling(True)
    gatherer = production_signals(records(phone), FakeClock(), recycling=recycling)

    # When gathered
    observed = gatherer.gather(subject(phone), default_policy())

    # Then the carrier was not asked and numberRecycled was not gathered
    assert recycling.asked == []
    assert S.NUMBER_RECYCLED not in observed


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        pytest.param(
            {"given_name": "true", "family_name": "false", "birthdate": "true", "id_document": "true"},
            {
                S.KYC_NAME_MATCH: "false",
                S.KYC_ELEMENTS_SUPPLIED: 3,
                S.KYC_ELEMENTS_UNCONFIRMED: 1,
                S.SECONDARY_SOURCE_MISMATCHES: 0,
            },
            id="name-mismatch",
        ),
        pytest.param(
            {
                "given_name": "true",
                "family_name": "true",
                "birthdate": "not_available",
                "id_document": "not_available",
                "address": "true",
            },
            {
                S.KYC_NAME_MATCH: "true",
                S.KYC_ELEMENTS_SUPPLIED: 2,
                S.KYC_ELEMENTS_UNCONFIRMED: 0,
                S.SECONDARY_SOURCE_MISMATCHES: 0,
            },
            id="not-available-neither-confirms-nor-denies",
        ),
        pytest.param(
            {
                "given_name": "true",
                "family_name": "true",
                "birthdate": "false",
                "id_document": "false",
                "address": "true",
                "postal_code": "false",
            },
            {
                S.KYC_NAME_MATCH: "true",
                S.KYC_ELEMENTS_SUPPLIED: 4,
                S.KYC_ELEMENTS_UNCONFIRMED: 3,
                S.SECONDARY_SOURCE_MISMATCHES: 3,
            },
            id="ssn-dob-address-mismatches",
        ),
        pytest.param(
            {"given_name": "not_available", "family_name": "not_available", "birthdate": "not_available"},
            {
                S.KYC_NAME_MATCH: "not_available",
                S.KYC_ELEMENTS_SUPPLIED: 0,
                S.KYC_ELEMENTS_UNCONFIRMED: 0,
                S.SECONDARY_SOURCE_MISMATCHES: 0,
            },
            id="nothing-answered",
        ),
    ],
)
def test_kyc_match_counts_only_answered_elements(
    answers: dict[str, KycAnswer], expected: dict[Signal, Any]
) -> None:
    # Given the operator's KYC Match answers for the claimed person
    phone = "+12025550306"
    kyc = ScriptedKyc(**answers)
    gatherer = production_signals(records(phone), FakeClock(), kyc=kyc)

    # When gathered for a request claiming a name, birth date, SSN and address
    observed = gatherer.gather(subject(phone, claimed=CLAIMED), default_policy())

    # Then the operator was given the claim, and only answered elements count
    [claim] = kyc.claims
    assert (claim.given_name, claim.family_name, claim.birthdate) == ("Noor", "Haddad", "1987-06-15")
    assert (claim.address, claim.postal_code, claim.locality) == ("42 Quarry Road", "12207", "Albany")
    assert {signal: observed.get(signal) for signal in expected} == expected


def test_a_name_mismatch_at_the_operator_raises_9168_and_other_mismatches_9004() -> None:
    # Given the operator disagrees with the claimed last name and birth date
    phone = "+12025550307"
    kyc = ScriptedKyc(given_name="true", family_name="false", birthdate="false", id_document="true")
    gatherer = production_signals(records(phone), FakeClock(), kyc=kyc)

    # When gathered and evaluated
    observed = gatherer.gather(subject(phone, claimed=CLAIMED), default_policy())
    codes = evaluate(observed, default_policy()).codes

    # Then the name mismatch is 9168 and the birth date (a secondary source's mismatch) is 9004
    assert observed[S.KYC_NAME_MATCH] == "false"
    assert observed[S.SECONDARY_SOURCE_MISMATCHES] == 1
    assert {9168, 9004} <= codes


def test_kyc_match_is_not_asked_without_anything_claimed() -> None:
    # Given a request that claims nothing about the person
    phone = "+12025550308"
    kyc = ScriptedKyc(given_name="true")
    gatherer = production_signals(records(phone), FakeClock(), kyc=kyc)

    # When gathered
    observed = gatherer.gather(subject(phone), default_policy())

    # Then the operator was not asked and no element counts as supplied
    assert kyc.claims == []
    assert (observed[S.KYC_ELEMENTS_SUPPLIED], observed[S.KYC_ELEMENTS_UNCONFIRMED]) == (0, 0)
    assert S.KYC_NAME_MATCH not in observed


# --- (b) a failing source ---------------------------------------------------------------------------


def test_a_failing_source_fails_only_its_own_signals_and_its_rules_are_skipped() -> None:
    # Given a SIM Swap API that fails while the other carrier APIs answer
    phone = "+12025550311"
    gatherer = production_signals(
        records(phone),
        FakeClock(),
        sim_swap=FailingSimSwap(),
        call_forwarding=ScriptedCallForwarding(False),
        tenure=ScriptedTenure(held_from=date(2020, 1, 1)),
    )

    # When gathered and evaluated
    observed = gatherer.gather(subject(phone), default_policy())
    evaluation = evaluate(observed, default_policy())

    # Then only simSwapHoursAgo is SOURCE_FAILED; the others are answered
    assert observed[S.SIM_SWAP_HOURS_AGO] is SOURCE_FAILED
    assert observed[S.CALL_FORWARDING] is False
    assert observed[S.TENURE_DAYS] == Bounds({30: True, 90: True})
    assert observed[S.PUBLIC_SMS] is False
    assert [signal for signal, value in observed.items() if value is SOURCE_FAILED] == [S.SIM_SWAP_HOURS_AGO]
    # and 9135 (skip on source failure) raises nothing: the request passes
    assert evaluation.codes == frozenset()
    assert evaluation.category_passed(Category.AUTHENTICATION)


def test_a_failing_aml_list_fails_closed_with_9201() -> None:
    # Given the AML watch list cannot be read, the other lists can
    phone = "+12025550312"
    gatherer = production_signals(records(phone), FakeClock(), lists=AmlListDown())

    # When gathered and evaluated
    observed = gatherer.gather(subject(phone, claimed=CLAIMED), default_policy())
    evaluation = evaluate(observed, default_policy())

    # Then amlListed is SOURCE_FAILED, the number's lists still answer
    assert observed[S.AML_LISTED] is SOURCE_FAILED
    assert observed[S.PUBLIC_SMS] is False
    assert observed[S.BOT_LINKED] is False
    # and only 9201 (onSourceFailure: fail) is raised; the other person-list rules are skipped
    assert evaluation.codes == frozenset({9201})
    assert evaluation.results[Category.COMPLIANCE] == (9201,)
    assert evaluation.category_passed(Category.IDENTIFICATION)


# --- (c) a slow source ------------------------------------------------------------------------------


def test_a_source_slower_than_its_timeout_is_a_failed_source() -> None:
    # Given a policy giving the carrier 50 ms (and the whole gathering the longest deadline allowed,
    # so only the carrier's own timeout can end the wait), and a SIM Swap API that never answers
    # until the test lets it
    def carrier_50ms(document: dict[str, Any]) -> None:
        document["sources"]["timeoutsMs"]["carrier"] = 50
        document["sources"]["deadlineMs"] = 20_000

    policy = policy_with(carrier_50ms)
    phone = "+12025550321"
    slow = BlockedSimSwap()
    gatherer = production_signals(
        records(phone), FakeClock(), sim_swap=slow, call_forwarding=ScriptedCallForwarding(True)
    )

    try:
        # When gathered
        observed = gatherer.gather(subject(phone), policy)

        # Then gather returned while the SIM Swap call was still blocked
        assert slow.entered.is_set()
        assert not slow.finished.is_set()
    finally:
        slow.release.set()

    # and its signal is SOURCE_FAILED while the other sources' signals are there
    assert observed[S.SIM_SWAP_HOURS_AGO] is SOURCE_FAILED
    assert observed[S.CALL_FORWARDING] is True
    assert observed[S.PUBLIC_SMS] is False
    assert observed[S.ACTIVE_IDENTITY] is True
    assert observed[S.PRIOR_ACTIVITY] == 0


# --- (d) concurrency --------------------------------------------------------------------------------


def test_sources_are_asked_at_the_same_time() -> None:
    # Given two carrier APIs that each answer only while the other is being asked
    phone = "+12025550331"
    barrier = threading.Barrier(2, timeout=5)
    gatherer = production_signals(
        records(phone),
        FakeClock(),
        sim_swap=MeetingSimSwap(barrier),
        call_forwarding=MeetingCallForwarding(barrier),
    )

    # When gathered
    observed = gatherer.gather(subject(phone), default_policy())

    # Then both answered: they were asked concurrently
    assert observed[S.SIM_SWAP_HOURS_AGO] == 2.0
    assert observed[S.CALL_FORWARDING] is True
    assert not barrier.broken


class ThreadNoting:
    """A SIM Swap API that notes the thread it was asked on and what the asking request's context held."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.contexts: list[str | None] = []

    def latest_change(self, phone_number: str) -> datetime | None:
        self.threads.append(threading.current_thread())
        self.contexts.append(REQUEST_MARK.get())
        return None


REQUEST_MARK: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_mark", default=None)


class ThreadNotingIdentities:
    """The identity records, noting the threads they were read on."""

    def __init__(self, records: InMemoryIdentityStore, threads: list[threading.Thread]) -> None:
        self.records = records
        self.threads = threads

    def find(self, phone_number: str) -> Identity | None:
        self.threads.append(threading.current_thread())
        return self.records.find(phone_number)


def test_each_gatherer_asks_its_sources_in_threads_of_its_own() -> None:
    # Given two gatherers, as two containers hold them, each noting the threads its sources ran on
    phone = "+12025550332"
    first, second = ThreadNoting(), ThreadNoting()
    one = production_signals(
        ThreadNotingIdentities(records(phone), first.threads), FakeClock(), sim_swap=first
    )
    other = production_signals(
        ThreadNotingIdentities(records(phone), second.threads), FakeClock(), sim_swap=second
    )

    # When each gathers, one after the other, under a policy that asks only those two sources
    def sim_swap_only(document: dict[str, Any]) -> None:
        for each in document["rules"]:
            if each["code"] != 9135:
                each["action"] = "off"

    policy = policy_with(sim_swap_only)
    one.gather(subject(phone), policy)
    other.gather(subject(phone), policy)

    # Then each asked on pool threads, and no thread served both
    assert len(first.threads) == len(second.threads) == 2
    assert all(thread.name.startswith("signals") for thread in first.threads + second.threads)
    assert not set(first.threads) & set(second.threads)


def test_a_source_runs_in_the_context_of_the_request_that_gathers() -> None:
    # Given a request whose context holds a mark (as the recorder's "whose calls" and the log keys do)
    phone = "+12025550333"
    noting = ThreadNoting()
    gatherer = production_signals(records(phone), FakeClock(), sim_swap=noting)
    marks = ["request-1", "request-2"]

    # When two requests gather, one after the other, on the same pool
    def gather_as(mark: str) -> None:
        REQUEST_MARK.set(mark)
        gatherer.gather(subject(phone), default_policy())

    for mark in marks:
        contextvars.copy_context().run(gather_as, mark)

    # Then the source saw each request's own mark, on the pool's thread
    assert noting.contexts == marks
    assert all(thread.name.startswith("signals") for thread in noting.threads)


# --- (e) the activity log ---------------------------------------------------------------------------


def test_activity_is_counted_before_the_check_is_recorded_once_per_client() -> None:
    # Given an empty activity log
    number, other = "+12025550341", "+12025550342"
    log = InMemoryActivityLog()
    clock = FakeClock()
    gatherer = production_signals(records(number, other), clock, activity=log)
    shared = ("clientCustomerId:cust-9",)

    # When client A checks the number, an hour later again, then another number of the same
    # customer, and client B checks the first number
    first = gatherer.gather(subject(number, attributes=shared), default_policy())
    clock.advance(hours=1)
    second = gatherer.gather(subject(number, attributes=shared), default_policy())
    sibling = gatherer.gather(subject(other, attributes=shared), default_policy())
    elsewhere = gatherer.gather(subject(number, client_id="client-b"), default_policy())

    # Then each check saw only the checks before it, of its own client
    def counts(observed: dict[Signal, Any]) -> tuple[int, int, int]:
        return (
            observed[S.PRIOR_ACTIVITY],
            observed[S.RECENT_CHECKS],
            observed[S.RECENT_CHECKS_SHARING_ATTRIBUTES],
        )

    assert counts(first) == (0, 0, 0)
    assert counts(second) == (1, 1, 0)
    assert counts(sibling) == (0, 0, 1)
    assert counts(elsewhere) == (0, 0, 0)
    # and each gathering recorded exactly one check
    assert [(client, phone, at) for client, phone, _, at in log.checks] == [
        ("client-a", number, NOW),
        ("client-a", number, NOW + timedelta(hours=1)),
        ("client-a", other, NOW + timedelta(hours=1)),
        ("client-b", number, NOW + timedelta(hours=1)),
    ]


# --- (f) only what the flow knows -------------------------------------------------------------------


def test_without_asking_sources_only_possession_and_the_key_are_observed() -> None:
    # Given every port refuses to be called
    calls: list[str] = []
    ports = {
        name: Untouchable(name, calls)
        for name in (
            "sim_swap",
            "call_forwarding",
            "tenure",
            "recycling",
            "kyc",
            "device_status",
            "lists",
            "activity",
            "change_events",
            "history",
        )
    }
    gatherer = production_signals(Untouchable("identities", calls), FakeClock(), **ports)

    # When a subject that must not ask sources is gathered
    observed = gatherer.gather(
        subject("+12025550351", key_mismatch=True, claimed=CLAIMED, ask_sources=False), default_policy()
    )

    # Then nothing was asked and only possession and the key mismatch are observed
    assert calls == []
    assert observed == {S.POSSESSION: "passed", S.KEY_MISMATCH: True}


# --- (g) rules turned off ---------------------------------------------------------------------------


def test_a_rule_turned_off_is_not_asked_for() -> None:
    # Given a policy with the SIM swap (9135) and call forwarding (9137) rules off
    def off(document: dict[str, Any]) -> None:
        rule(document, 9135)["action"] = "off"
        rule(document, 9137)["action"] = "off"

    policy = policy_with(off)
    phone = "+12025550361"
    sim_swap, forwarding = ScriptedSimSwap(NOW), ScriptedCallForwarding(True)
    tenure = ScriptedTenure(held_from=date(2020, 1, 1))
    gatherer = production_signals(
        records(phone), FakeClock(), sim_swap=sim_swap, call_forwarding=forwarding, tenure=tenure
    )

    # When gathered
    observed = gatherer.gather(subject(phone), policy)

    # Then neither source was asked nor their signals observed; tenure (still on) was asked
    assert (sim_swap.asked, forwarding.asked) == ([], [])
    assert S.SIM_SWAP_HOURS_AGO not in observed
    assert S.CALL_FORWARDING not in observed
    assert len(tenure.asked) == 2
    assert evaluate(observed, policy).codes == frozenset()


# --- (h) partner findings ---------------------------------------------------------------------------


def test_partner_findings_come_from_the_identity_records() -> None:
    # Given a number whose identity record carries a data partner's findings 9176 and 9302
    phone, unknown = "+12025550371", "+12025550372"
    gatherer = production_signals(records(phone, reputation_reasons=(9176, 9302)), FakeClock())

    # When the number, and one without a record, are gathered
    found = gatherer.gather(subject(phone), default_policy())
    missing = gatherer.gather(subject(unknown), default_policy())

    # Then the findings are observed and raise their codes whatever the other signals say
    assert found[S.PARTNER_FINDINGS] == frozenset({9176, 9302})
    evaluation = evaluate(found, default_policy())
    assert evaluation.results[Category.AUTHENTICATION] == (9176,)
    assert evaluation.results[Category.RISK] == (9302,)
    # and a number without a record has none, and no active identity
    assert missing[S.PARTNER_FINDINGS] == frozenset()
    assert missing[S.ACTIVE_IDENTITY] is False


# --- (i) Sandbox --------------------------------------------------------------------------------------


def sandbox_subject(phone: str) -> Subject:
    return Subject(flow="verify", client_id="client-a", phone_number=phone)


def test_a_sandbox_users_script_overrides_the_clean_defaults() -> None:
    # Given the US Sandbox user scripted with a SIM swap three hours ago
    signals = ScriptedSignals(Catalogue.load("US"))

    # When gathered
    observed = signals.gather(sandbox_subject("+14045550135"), default_policy())

    # Then the script's value is observed, the rest are the clean defaults, and 9135 is raised
    assert observed[S.SIM_SWAP_HOURS_AGO] == 3
    assert observed[S.CALL_FORWARDING] is False
    assert observed[S.TENURE_DAYS] == 3650
    assert evaluate(observed, default_policy(), "verify").codes == frozenset({9135})


def test_a_sandbox_script_of_source_failed_is_a_failed_source() -> None:
    # Given the US Sandbox user whose AML check is scripted to time out
    signals = ScriptedSignals(Catalogue.load("US"))

    # When gathered
    observed = signals.gather(sandbox_subject("+15055550199"), default_policy())

    # Then amlListed is SOURCE_FAILED, which the policy fails closed (9201)
    assert observed[S.AML_LISTED] is SOURCE_FAILED
    assert evaluate(observed, default_policy(), "verify").codes == frozenset({9201})


def test_an_ordinary_sandbox_user_gets_the_clean_defaults() -> None:
    # Given the US Sandbox user who passes OTP, with no scripted observations
    signals = ScriptedSignals(Catalogue.load("US"))

    # When gathered
    observed = signals.gather(sandbox_subject("+12025550101"), default_policy())

    # Then every source's signal is its clean default and nothing is raised
    sourced = {signal: value for signal, value in observed.items() if signal in SANDBOX_DEFAULTS}
    assert sourced == {
        signal: value
        for signal, value in SANDBOX_DEFAULTS.items()
        if signal in default_policy().needed_signals("verify")
    }
    assert observed[S.SIM_SWAP_HOURS_AGO] is None
    assert observed[S.ANY_INFORMATION] is True
    assert evaluate(observed, default_policy(), "verify").passed
