"""The fraud policy: every reason code raised by its signals and not raised on the other side of its
threshold; categories, source failures, actions, flows, partner findings and assurance levels."""

from __future__ import annotations

from typing import Any

import pytest

from phoneid.domain.evaluation import (
    REASONS,
    SOURCE_FAILED,
    Category,
    assess,
    default_policy,
    describe,
    evaluate,
    identity_observations,
)
from phoneid.domain.identity import Element, MatchResult
from phoneid.domain.policy import Bounds, Signal

IDN, AUTH, COMP, RISK = Category.IDENTIFICATION, Category.AUTHENTICATION, Category.COMPLIANCE, Category.RISK
S = Signal

# The API's evaluation failure reason codes (docs/fraud-policy.md): code -> category.
DOCUMENTED_REASONS: dict[int, Category] = {
    **dict.fromkeys((9001, 9003, 9004, 9005, 9011, 9012, 9013, 9014, 9015, 9081, 9082, 9083), IDN),
    **dict.fromkeys((9100, 9101, 9131, 9132, 9133, 9134, 9135, 9136, 9137), AUTH),
    **dict.fromkeys((9161, 9162, 9163, 9164, 9165, 9166, 9167, 9168), AUTH),
    **dict.fromkeys((9171, 9172, 9173, 9174, 9175, 9176, 9177, 9180, 9181), AUTH),
    9201: COMP,
    **dict.fromkeys((9301, 9302, 9303, 9304), RISK),
}

# For each code: observations that raise it, and observations at the nearest point that do not.
EDGES: dict[int, tuple[dict[Signal, Any], dict[Signal, Any]]] = {
    9001: ({S.IDENTITY_MISMATCHES: 1}, {S.IDENTITY_MISMATCHES: 0}),
    9003: ({S.IDENTITY_FOUND: False}, {S.IDENTITY_FOUND: True}),
    9004: ({S.SECONDARY_SOURCE_MISMATCHES: 1}, {S.SECONDARY_SOURCE_MISMATCHES: 0}),
    9005: ({S.SOURCES_WITH_MISMATCH: 2}, {S.SOURCES_WITH_MISMATCH: 1}),
    9011: (
        {S.IDENTITY_FOUND: True, S.IDENTITY_MISMATCHES: 0, S.IDENTITY_CONFIRMED_ELEMENTS: 1},
        {S.IDENTITY_FOUND: True, S.IDENTITY_MISMATCHES: 0, S.IDENTITY_CONFIRMED_ELEMENTS: 2},
    ),
    9012: ({S.SSN_MATCH: "mismatch"}, {S.SSN_MATCH: "match"}),
    9013: ({S.DOB_MATCH: "mismatch"}, {S.DOB_MATCH: "match"}),
    9014: ({S.NAME_MATCH: "mismatch"}, {S.NAME_MATCH: "match"}),
    9015: ({S.ADDRESS_MATCH: "mismatch"}, {S.ADDRESS_MATCH: "match"}),
    9081: ({S.SSN_ISSUED_BEFORE_BIRTH: True}, {S.SSN_ISSUED_BEFORE_BIRTH: False}),
    9082: ({S.CLAIMED_ADDRESS_CORRECTIONAL: True}, {S.CLAIMED_ADDRESS_CORRECTIONAL: False}),
    9083: ({S.IDENTITY_DECEASED: True}, {S.IDENTITY_DECEASED: False}),
    9100: ({S.POSSESSION: "failed"}, {S.POSSESSION: "passed"}),
    9101: ({S.KEY_MISMATCH: True}, {S.KEY_MISMATCH: False}),
    9131: ({S.LINE_TYPE_REGISTRY: "landline"}, {S.LINE_TYPE_REGISTRY: "mobile"}),
    9132: ({S.PUBLIC_SMS: True}, {S.PUBLIC_SMS: False}),
    9133: ({S.SIM_TRUST_SCORE: 29}, {S.SIM_TRUST_SCORE: 30}),
    9134: ({S.LINE_TYPE: "voip-nonfixed"}, {S.LINE_TYPE: "voip-fixed"}),
    9135: ({S.SIM_SWAP_HOURS_AGO: 23.99}, {S.SIM_SWAP_HOURS_AGO: 24}),
    9136: ({S.PORT_HOURS_AGO: 23.99}, {S.PORT_HOURS_AGO: 24}),
    9137: ({S.CALL_FORWARDING: True}, {S.CALL_FORWARDING: False}),
    9161: ({S.TENURE_DAYS: 29}, {S.TENURE_DAYS: 30}),
    9162: ({S.TENURE_DAYS: 89}, {S.TENURE_DAYS: 90}),
    9163: (
        {S.NUMBER_RECYCLED: True, S.IDENTITIES_ON_NUMBER: 2},
        {S.NUMBER_RECYCLED: True, S.IDENTITIES_ON_NUMBER: 1},
    ),
    9164: (
        {S.DAYS_SINCE_ASSOCIATION: 365, S.DISCONNECT_SINCE_ASSOCIATION: True},
        {S.DAYS_SINCE_ASSOCIATION: 364, S.DISCONNECT_SINCE_ASSOCIATION: True},
    ),
    9165: (
        {S.NUMBER_RECYCLED: True, S.DISCONNECT_SINCE_ASSOCIATION: True},
        {S.NUMBER_RECYCLED: True, S.DISCONNECT_SINCE_ASSOCIATION: False},
    ),
    9166: ({S.NUMBER_ADDRESS_CORRECTIONAL: True}, {S.NUMBER_ADDRESS_CORRECTIONAL: False}),
    9167: ({S.NUMBER_OWNER_DECEASED: True}, {S.NUMBER_OWNER_DECEASED: False}),
    9168: ({S.KYC_NAME_MATCH: "false"}, {S.KYC_NAME_MATCH: "not_available"}),
    9171: ({S.SHORT_TENURE_IDENTITIES_ON_NUMBER: 2}, {S.SHORT_TENURE_IDENTITIES_ON_NUMBER: 1}),
    9172: ({S.SHORT_TENURE_IDENTITIES_ON_NUMBER: 3}, {S.SHORT_TENURE_IDENTITIES_ON_NUMBER: 2}),
    9173: ({S.SHORT_TENURE_IDENTITIES_ON_NUMBER: 4}, {S.SHORT_TENURE_IDENTITIES_ON_NUMBER: 3}),
    9174: ({S.SHORT_TENURE_IDENTITIES_ON_NUMBER: 5}, {S.SHORT_TENURE_IDENTITIES_ON_NUMBER: 4}),
    9175: ({S.ACTIVE_IDENTITY: False}, {S.ACTIVE_IDENTITY: True}),
    9176: ({S.BOT_LINKED: True}, {S.BOT_LINKED: False}),
    9177: ({S.ANY_INFORMATION: False}, {S.ANY_INFORMATION: True}),
    9180: (
        {S.KYC_ELEMENTS_SUPPLIED: 4, S.KYC_ELEMENTS_UNCONFIRMED: 1},
        {S.KYC_ELEMENTS_SUPPLIED: 4, S.KYC_ELEMENTS_UNCONFIRMED: 0},
    ),
    9181: (
        {S.KYC_ELEMENTS_SUPPLIED: 3, S.KYC_ELEMENTS_UNCONFIRMED: 1},
        {S.KYC_ELEMENTS_SUPPLIED: 3, S.KYC_ELEMENTS_UNCONFIRMED: 0},
    ),
    9201: ({S.AML_LISTED: True}, {S.AML_LISTED: False}),
    9301: (
        {S.NETWORK_REACHABLE: False, S.PRIOR_ACTIVITY: 0},
        {S.NETWORK_REACHABLE: False, S.PRIOR_ACTIVITY: 1},
    ),
    9302: ({S.RECENT_CHECKS: 10}, {S.RECENT_CHECKS: 9}),
    9303: ({S.NUMBER_CHANGE_EVENTS: 3}, {S.NUMBER_CHANGE_EVENTS: 2}),
    9304: ({S.RECENT_CHECKS_SHARING_ATTRIBUTES: 5}, {S.RECENT_CHECKS_SHARING_ATTRIBUTES: 4}),
}


def test_the_default_policy_has_one_rule_for_every_documented_code() -> None:
    # Given the shipped policy and the API's table
    policy = default_policy()

    # Then each code has exactly one rule, in its category
    assert {rule.code for rule in policy.rules} == set(DOCUMENTED_REASONS)
    assert all(rule.category == DOCUMENTED_REASONS[rule.code] for rule in policy.rules)
    assert set(EDGES) == set(DOCUMENTED_REASONS)


@pytest.mark.parametrize("code", sorted(EDGES))
def test_each_code_is_raised_by_its_signals(code: int) -> None:
    # Given observations on the raising side of the rule
    raising, _ = EDGES[code]

    # When evaluated (in every flow the rule applies to)
    rule = next(r for r in default_policy().rules if r.code == code)
    evaluation = evaluate(raising, flow=rule.flows[0])

    # Then the code fails its category, and is the only failure
    assert evaluation.results[DOCUMENTED_REASONS[code]] == (code,)
    assert evaluation.codes == {code}
    assert not evaluation.passed


@pytest.mark.parametrize("code", sorted(EDGES))
def test_each_code_is_not_raised_on_the_other_side_of_its_threshold(code: int) -> None:
    # Given observations just short of raising the code
    _, clean = EDGES[code]

    # When evaluated
    rule = next(r for r in default_policy().rules if r.code == code)
    evaluation = evaluate(clean, flow=rule.flows[0])

    # Then the category was evaluated without that code
    assert code not in evaluation.results[DOCUMENTED_REASONS[code]]


def test_a_signal_not_gathered_raises_nothing_and_evaluates_no_category() -> None:
    # Given nothing observed
    # When evaluated
    evaluation = evaluate({})

    # Then no category appears
    assert evaluation.results == {}
    assert evaluation.passed


def test_all_four_categories_appear_when_their_signals_were_gathered() -> None:
    # Given one signal of each category, clean
    observed = {S.IDENTITY_FOUND: True, S.CALL_FORWARDING: False, S.AML_LISTED: False, S.RECENT_CHECKS: 0}

    # When evaluated
    evaluation = evaluate(observed)

    # Then the four categories pass, in the documented order
    assert list(evaluation.results) == [IDN, AUTH, COMP, RISK]
    assert all(codes == () for codes in evaluation.results.values())


def test_a_failed_source_is_skipped_unless_the_rule_fails_closed() -> None:
    # Given the SIM swap source (fails open) and the AML list (fails closed) both down
    observed = {S.SIM_SWAP_HOURS_AGO: SOURCE_FAILED, S.AML_LISTED: SOURCE_FAILED}

    # When evaluated
    evaluation = evaluate(observed)

    # Then 9135 is not raised, 9201 is
    assert evaluation.results == {AUTH: (), COMP: (9201,)}


def test_tenure_known_only_against_thresholds_compares_as_the_carrier_answered() -> None:
    # Given the carrier said: held for 30 days, not for 90
    observed = {S.TENURE_DAYS: Bounds({30: True, 90: False})}

    # When evaluated
    evaluation = evaluate(observed)

    # Then short tenure (30..90) is raised, very short tenure (< 30) is not
    assert evaluation.results[AUTH] == (9162,)


def test_a_rule_of_another_flow_is_not_evaluated() -> None:
    # Given too few confirmed elements, which only the staged flow's complete checks
    observed = {S.IDENTITY_FOUND: True, S.IDENTITY_MISMATCHES: 0, S.IDENTITY_CONFIRMED_ELEMENTS: 1}

    # When evaluated for verify and for complete
    # Then only complete raises 9011
    assert evaluate(observed, flow="verify").passed
    assert evaluate(observed, flow="complete").results[IDN] == (9011,)


def test_a_partner_finding_raises_its_code_in_its_category() -> None:
    # Given a data partner reported 9176 and 9302 for the number, and nothing else is known
    observed = {S.PARTNER_FINDINGS: frozenset({9176, 9302})}

    # When evaluated
    evaluation = evaluate(observed)

    # Then each lands in its category
    assert evaluation.results == {AUTH: (9176,), RISK: (9302,)}


def test_identity_observations_from_a_match() -> None:
    # Given a found identity with name and SSN matched and the birth date mismatched
    match = MatchResult(matched=frozenset({Element.NAME, Element.SSN}), mismatched=frozenset({Element.DOB}))

    # When turned into observations
    observed = identity_observations(True, match)

    # Then they name each element, the mismatches and the confirmed elements
    assert observed == {
        S.IDENTITY_FOUND: True,
        S.IDENTITY_MISMATCHES: 1,
        S.IDENTITY_CONFIRMED_ELEMENTS: 2,
        S.SSN_MATCH: "match",
        S.NAME_MATCH: "match",
        S.DOB_MATCH: "mismatch",
    }
    assert evaluate(observed).results[IDN] == (9001, 9013)


def test_elements_without_the_name_confirm_nobody() -> None:
    # Given SSN and birth date matched but no name given
    observed = identity_observations(True, MatchResult(matched=frozenset({Element.SSN, Element.DOB})))

    # When evaluated
    # Then identification fails with 9011
    assert observed[S.IDENTITY_CONFIRMED_ELEMENTS] == 0
    assert evaluate(observed).results[IDN] == (9011,)


@pytest.mark.parametrize(
    ("observed", "enrolled_before", "level", "reasons"),
    [
        ({S.SIM_SWAP_HOURS_AGO: 2}, False, "AL-1", ("-1E",)),
        ({S.BOT_LINKED: True, S.PUBLIC_SMS: True}, False, "AL-1", ("-1G", "-1H")),
        ({S.RECENT_CHECKS: 40}, False, "AL0", ("0F",)),
        (
            {S.IDENTITY_FOUND: True, S.IDENTITY_MISMATCHES: 0, S.IDENTITY_CONFIRMED_ELEMENTS: 1},
            False,
            "AL1",
            ("1B",),
        ),
        ({S.IDENTITY_FOUND: False}, False, "AL1", ("1A",)),
        (
            {
                S.IDENTITY_FOUND: True,
                S.IDENTITY_MISMATCHES: 0,
                S.IDENTITY_CONFIRMED_ELEMENTS: 1,
                S.KYC_ELEMENTS_SUPPLIED: 2,
                S.KYC_ELEMENTS_UNCONFIRMED: 0,
            },
            False,
            "AL2",
            ("2B",),
        ),
        (
            {
                S.IDENTITY_FOUND: True,
                S.IDENTITY_MISMATCHES: 0,
                S.IDENTITY_CONFIRMED_ELEMENTS: 2,
                S.KYC_ELEMENTS_SUPPLIED: 2,
                S.KYC_ELEMENTS_UNCONFIRMED: 0,
            },
            True,
            "AL3",
            ("3A",),
        ),
        (
            {S.IDENTITY_FOUND: True, S.IDENTITY_MISMATCHES: 0, S.IDENTITY_CONFIRMED_ELEMENTS: 3},
            False,
            "AL2",
            ("2A",),
        ),
    ],
)
def test_assurance_level_follows_the_evaluation(
    observed: dict[Signal, Any], enrolled_before: bool, level: str, reasons: tuple[str, ...]
) -> None:
    # Given observations and whether the identity was enrolled before
    policy = default_policy()

    # When assessed after evaluation
    assurance = assess(
        evaluate(observed, policy, "verify"), observed, enrolled_before=enrolled_before, policy=policy
    )

    # Then the level and its reasons are the policy's
    assert (assurance.level, assurance.reasons) == (level, reasons)


@pytest.mark.parametrize(("code", "category"), sorted(DOCUMENTED_REASONS.items()))
def test_every_documented_reason_code_exists_with_its_category(code: int, category: Category) -> None:
    # Given a reason code of the API's table
    # When looked up
    found_category, description = REASONS[code]

    # Then it has its category and a description
    assert found_category == category
    assert description
    assert describe(code) == description


def test_no_reason_code_exists_beyond_the_documented_ones() -> None:
    assert set(REASONS) == set(DOCUMENTED_REASONS)
