"""What a verification decides beside the evaluation: Verified User's and Human Assurance's outcome,
and which of the person's businesses are shown, most relevant first."""

from __future__ import annotations

import pytest

from phoneid.domain.evaluation import Category, Evaluation
from phoneid.domain.identity import Address, Business, Identity
from phoneid.domain.verification import (
    Label,
    VerificationType,
    business_score,
    decide,
    ranked_businesses,
)

IDN, AUTH, COMP, RISK = Category.IDENTIFICATION, Category.AUTHENTICATION, Category.COMPLIANCE, Category.RISK
VERIFIED_USER, HUMAN_ASSURANCE = VerificationType.VERIFIED_USER, VerificationType.HUMAN_ASSURANCE


def evaluation(**failing: tuple[int, ...]) -> Evaluation:
    """Every category evaluated; ``authentication=(9135,)`` fails that category with that code."""
    results = {category: failing.get(category.value, ()) for category in Category}
    return Evaluation(results)


# --- verifiedUser -----------------------------------------------------------------------------------


def test_verified_user_is_verified_when_the_person_matches_and_every_category_passes() -> None:
    # Given an evaluation where every category passed
    # When Verified User decides
    # Then it succeeds as verified
    assert decide(VERIFIED_USER, evaluation()) == (True, Label.VERIFIED)


@pytest.mark.parametrize(
    "failing",
    [
        {"authentication": (9135,)},
        {"compliance": (9201,)},
        {"risk": (9302,)},
        {"identification": (9004,)},  # the operator's KYC disagrees; the records still match
        {"identification": (9011,)},
    ],
)
def test_verified_user_is_not_verified_when_the_person_matches_but_the_policy_fails(
    failing: dict[str, tuple[int, ...]],
) -> None:
    # Given the person matched on the number, and a category failed
    # When Verified User decides
    # Then it fails as not-verified
    assert decide(VERIFIED_USER, evaluation(**failing)) == (False, Label.NOT_VERIFIED)


@pytest.mark.parametrize("code", [9001, 9003, 9012, 9013, 9014, 9015])
def test_verified_user_is_no_match_when_the_records_do_not_hold_the_person(code: int) -> None:
    # Given identification failed because the person is not found or an element disagrees
    # When Verified User decides, even with the other categories passing
    # Then it fails as no-match
    assert decide(VERIFIED_USER, evaluation(identification=(code,))) == (False, Label.NO_MATCH)


def test_no_match_wins_over_other_failures() -> None:
    # Given the person is not found and authentication failed too
    failed = evaluation(identification=(9003,), authentication=(9135,))

    # When Verified User decides
    # Then the outcome is no-match
    assert decide(VERIFIED_USER, failed) == (False, Label.NO_MATCH)


# --- humanAssurance ---------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [9001, 9003, 9004, 9011, 9014])
def test_identification_failing_does_not_decide_human_assurance(code: int) -> None:
    # Given only identification failed
    # When Human Assurance decides
    # Then a human holds the number
    assert decide(HUMAN_ASSURANCE, evaluation(identification=(code,))) == (True, Label.HUMAN)


@pytest.mark.parametrize(
    "failing",
    [{"authentication": (9135,)}, {"compliance": (9201,)}, {"risk": (9304,)}],
)
def test_authentication_compliance_or_risk_failing_is_not_human(failing: dict[str, tuple[int, ...]]) -> None:
    # Given authentication, compliance or risk failed
    # When Human Assurance decides
    # Then it is not a human
    assert decide(HUMAN_ASSURANCE, evaluation(**failing)) == (False, Label.NOT_HUMAN)


def test_human_assurance_passes_when_everything_passes_or_nothing_was_evaluated() -> None:
    # Given a passing evaluation, and one in which no category was evaluated
    # When Human Assurance decides
    # Then a human holds the number in both
    assert decide(HUMAN_ASSURANCE, evaluation()) == (True, Label.HUMAN)
    assert decide(HUMAN_ASSURANCE, Evaluation({})) == (True, Label.HUMAN)


# --- businesses -------------------------------------------------------------------------------------

HOME = Address(address="12 Orchard Street", city="Albany", region="NY", postal_code="12207")
FILING = (("date", "2015-06-01"), ("region", "NY"), ("registrationNumber", "5123456"))
LENA = ("Lena", "Ortiz")


def person(*businesses: Business, addresses: tuple[Address, ...] = (HOME,)) -> Identity:
    return Identity(
        phone_number="+12025550401",
        first_name="Lena",
        last_name="Ortiz",
        dob="1990-02-14",
        ssn="123456789",
        addresses=addresses,
        businesses=businesses,
    )


def business(
    name: str,
    *,
    related: tuple[tuple[str, str], ...] = (LENA,),
    postal_code: str | None = None,
    filed: bool = False,
) -> Business:
    return Business(
        name=name,
        address=Address(address="8 Market Square", city="Albany", region="NY", postal_code=postal_code)
        if postal_code
        else None,
        registration=FILING if filed else (),
        related_persons=related,
    )


def test_a_business_scores_for_the_person_a_shared_postal_code_and_a_filing() -> None:
    # Given businesses that the person is related to, with more or less in common
    related_only = business("Only Related")
    shared = business("Shared Address", postal_code="12207-4410")
    filed = business("Filed", filed=True)
    everything = business("Everything", postal_code="12207", filed=True)

    # When scored for the person at her home address
    def score(b: Business) -> float:
        return business_score(b, "Lena", "Ortiz", (HOME,))

    # Then the person counts 0.6, a shared postal code (first five) 0.3 and a filing 0.1
    assert score(related_only) == 0.6
    assert score(shared) == 0.9
    assert score(filed) == 0.7
    assert score(everything) == 1.0


def test_businesses_below_the_bar_are_left_out_and_the_rest_ranked() -> None:
    # Given a business she is related to, one sharing her address and filing, one not hers at all,
    # and one she is related to that shares her address and filed
    yes_related = business("Ortiz Bakery LLC")
    not_hers = business("Hudson Couriers Inc", related=(("Mara", "Quinn"),), postal_code="12207", filed=True)
    unrelated = business("Stranger Things Co", related=())
    best = business("Lena's Loaves", postal_code="12207", filed=True)

    # When ranked for Lena Ortiz
    ranked = ranked_businesses(person(yes_related, not_hers, unrelated, best), "Lena", "Ortiz")

    # Then the businesses below 0.6 are left out (0.4 without her), the best first
    assert [b.name for b in ranked] == ["Lena's Loaves", "Ortiz Bakery LLC"]


def test_ties_are_ranked_by_name_ignoring_case_and_accents() -> None:
    # Given businesses of one score whose names differ in case and accents
    businesses = [business("Fudge Co"), business("apple Co"), business("Éclair Co"), business("Banana Co")]

    # When ranked
    ranked = ranked_businesses(person(*businesses), "Lena", "Ortiz")

    # Then they are in alphabetical order of their folded names
    assert [b.name for b in ranked] == ["apple Co", "Banana Co", "Éclair Co", "Fudge Co"]


def test_related_persons_are_compared_ignoring_case_and_accents() -> None:
    # Given businesses listing her as "LENA ORTÍZ" and as "lena ortiz", and one listing someone else
    shouted = business("Shouted", related=(("LENA", "ORTÍZ"),))
    lower = business("Lower", related=(("Mara", "Quinn"), ("lena", "ortiz")))
    someone_else = business("Someone Else", related=(("Lena", "Ortega"),))

    # When ranked for "Léna Ortiz"
    ranked = ranked_businesses(person(shouted, lower, someone_else), "Léna", "Ortiz")

    # Then both of hers are shown; the other person's is not
    assert [b.name for b in ranked] == ["Lower", "Shouted"]


def test_without_a_full_name_no_business_is_tied_to_the_person() -> None:
    # Given a business she is related to that shares her address and filed
    best = business("Lena's Loaves", postal_code="12207", filed=True)

    # When ranked with a first or last name missing
    # Then the person does not count, and 0.4 is below the bar
    assert ranked_businesses(person(best), "Lena", None) == []
    assert ranked_businesses(person(best), None, "Ortiz") == []
    assert business_score(best, None, "Ortiz", (HOME,)) == 0.4
