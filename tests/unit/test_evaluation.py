"""The Global Fraud Policy evaluation: pass/fail per category and the reason codes of SPEC."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from phoneid.domain.evaluation import REASONS, Category, Signals, describe, evaluate
from phoneid.domain.identity import Element, MatchResult
from phoneid.domain.session import Possession

IDN, AUTH, COMP, RISK = Category.IDENTIFICATION, Category.AUTHENTICATION, Category.COMPLIANCE, Category.RISK

# SPEC, Errors, "Evaluation failure reason codes": code -> category.
SPEC_REASONS: dict[int, Category] = {
    **dict.fromkeys((9001, 9003, 9004, 9005, 9011, 9012, 9013, 9014, 9015, 9081, 9082, 9083), IDN),
    **dict.fromkeys((9100, 9101, 9131, 9132, 9133, 9134, 9135, 9136, 9137), AUTH),
    **dict.fromkeys((9161, 9162, 9163, 9164, 9165, 9166, 9167, 9168), AUTH),
    **dict.fromkeys((9171, 9172, 9173, 9174, 9175, 9176, 9177, 9180, 9181), AUTH),
    9201: COMP,
    **dict.fromkeys((9301, 9302, 9303, 9304), RISK),
}


def identified(matched: Iterable[Element] = (), mismatched: Iterable[Element] = ()) -> Signals:
    """Signals of a found identity with the given match outcome."""
    return Signals(
        identity_found=True,
        identity_match=MatchResult(matched=frozenset(matched), mismatched=frozenset(mismatched)),
    )


def test_possession_passed_passes_authentication() -> None:
    # Given possession passed
    # When evaluated
    evaluation = evaluate(Signals(possession=Possession.PASSED))

    # Then authentication passes and nothing else is evaluated
    assert evaluation.results == {AUTH: ()}
    assert evaluation.passed
    assert evaluation.category_passed(AUTH)


@pytest.mark.parametrize("status", [Possession.PENDING, Possession.FAILED])
def test_possession_not_passed_fails_authentication_with_9100(status: Possession) -> None:
    # Given possession pending or failed
    # When evaluated
    evaluation = evaluate(Signals(possession=status))

    # Then authentication fails with 9100
    assert evaluation.results == {AUTH: (9100,)}
    assert not evaluation.passed


def test_identity_not_found_fails_identification_with_9003() -> None:
    # Given no identity for the number
    # When evaluated
    evaluation = evaluate(Signals(identity_found=False))

    # Then identification fails with 9003
    assert evaluation.results == {IDN: (9003,)}


@pytest.mark.parametrize(
    ("element", "code"),
    [(Element.SSN, 9012), (Element.DOB, 9013), (Element.NAME, 9014), (Element.ADDRESS, 9015)],
)
def test_a_mismatch_gives_9001_and_the_code_of_the_element(element: Element, code: int) -> None:
    # Given a found identity where one element is mismatched, the others matched
    others = set(Element) - {element}

    # When evaluated
    evaluation = evaluate(identified(matched=others, mismatched={element}))

    # Then identification fails with 9001 and the element's own code
    assert evaluation.results == {IDN: (9001, code)}


def test_several_mismatches_give_each_code_once_in_order() -> None:
    # Given SSN and date of birth mismatched
    # When evaluated
    evaluation = evaluate(identified(matched={Element.NAME}, mismatched={Element.DOB, Element.SSN}))

    # Then all codes are listed, sorted
    assert evaluation.results == {IDN: (9001, 9012, 9013)}


@pytest.mark.parametrize("other", [Element.SSN, Element.DOB, Element.ADDRESS])
def test_name_and_one_more_element_pass_identification(other: Element) -> None:
    # Given the name and one other element matched
    # When evaluated
    evaluation = evaluate(identified(matched={Element.NAME, other}))

    # Then identification passes
    assert evaluation.results == {IDN: ()}
    assert evaluation.passed


@pytest.mark.parametrize(
    "matched",
    [{Element.NAME}, {Element.SSN, Element.DOB}, set()],
    ids=["name-only", "no-name", "nothing"],
)
def test_fewer_elements_than_name_plus_one_give_9011(matched: set[Element]) -> None:
    # Given only the name, or elements without the name, matched
    # When evaluated
    evaluation = evaluate(identified(matched=matched))

    # Then identification fails with 9011
    assert evaluation.results == {IDN: (9011,)}


def test_reason_codes_land_in_their_category() -> None:
    # Given passed possession and reason codes of every category from signal sources
    signals = Signals(possession=Possession.PASSED, reason_codes=frozenset({9176, 9302, 9201, 9083}))

    # When evaluated
    evaluation = evaluate(signals)

    # Then each code is reported under its own category
    assert evaluation.results == {AUTH: (9176,), RISK: (9302,), COMP: (9201,), IDN: (9083,)}
    assert not evaluation.category_passed(AUTH)
    assert not evaluation.passed


def test_a_reason_code_and_9100_share_authentication() -> None:
    # Given failed possession and an authentication reason
    # When evaluated
    evaluation = evaluate(Signals(possession=Possession.FAILED, reason_codes=frozenset({9135})))

    # Then both are listed under authentication
    assert evaluation.results == {AUTH: (9100, 9135)}


@pytest.mark.parametrize(("code", "category"), sorted(SPEC_REASONS.items()))
def test_every_spec_reason_code_exists_with_its_category(code: int, category: Category) -> None:
    # Given a reason code of SPEC's table
    # When looked up
    found_category, description = REASONS[code]

    # Then it has SPEC's category and a description
    assert found_category == category
    assert description
    assert describe(code) == description


def test_no_reason_code_exists_beyond_spec() -> None:
    # Given SPEC's table
    # When compared with the service's table
    # Then they list the same codes
    assert set(REASONS) == set(SPEC_REASONS)
