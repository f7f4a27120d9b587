"""Verified User and Human Assurance: what a verification decides and shows, beside the evaluation.

The outcome label (``signals[0].<type>.champion.label``), which businesses are shown, and the
identity as returned follow from the policy's evaluation and the identity records, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from phoneid.domain.addresses import is_po_box
from phoneid.domain.evaluation import Category, Evaluation
from phoneid.domain.identity import Address, Business, Identity, fold


class VerificationType(StrEnum):
    VERIFIED_USER = "verifiedUser"
    HUMAN_ASSURANCE = "humanAssurance"


# Types the maker's SDKs name that this service does not offer: refused with 8001 naming the offered ones.
UNSUPPORTED_TYPES = frozenset({"accountOpening", "prefill", "prefillForBiz", "identityResolution", "bot"})


class Label(StrEnum):
    """The champion model's outcome."""

    VERIFIED = "verified"  # verifiedUser: the person matched and every category passed
    NOT_VERIFIED = "not-verified"  # verifiedUser: the person matched, the policy failed
    NO_MATCH = "no-match"  # verifiedUser: no identity of that name on the number
    HUMAN = "human"  # humanAssurance: authentication, compliance and risk passed
    NOT_HUMAN = "not-human"  # humanAssurance: one of them failed


@dataclass(frozen=True)
class VerifyItem:
    """One verification as the API, its batch and a Connect row ask for it."""

    phone_number: str
    verification_type: VerificationType
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    client_customer_id: str | None = None
    client_human_id: str | None = None
    # (attributeType, attributeValue); values are the client's non-PII identifiers
    attributes: tuple[tuple[str, str], ...] = ()


def matched_identity(evaluation: Evaluation) -> bool:
    """Whether the records hold this person on this number: found, and no element disagreeing."""
    failing = evaluation.results.get(Category.IDENTIFICATION, ())
    return not any(code in failing for code in (9001, 9003, 9012, 9013, 9014, 9015))


def decide(verification_type: VerificationType, evaluation: Evaluation) -> tuple[bool, Label]:
    """Success and the label. Human Assurance asks whether a real, unsuspicious person holds the
    number: identification is shown but does not decide it."""
    if verification_type == VerificationType.HUMAN_ASSURANCE:
        human = all(
            evaluation.category_passed(category)
            for category in (Category.AUTHENTICATION, Category.COMPLIANCE, Category.RISK)
        )
        return human, Label.HUMAN if human else Label.NOT_HUMAN
    if not matched_identity(evaluation):
        return False, Label.NO_MATCH
    return (True, Label.VERIFIED) if evaluation.passed else (False, Label.NOT_VERIFIED)


def shown_addresses(addresses: Iterable[Address], *, po_boxes: bool) -> list[Address]:
    """Addresses as a response shows them: PO Boxes only for clients whose flag allows them."""
    return [a for a in addresses if po_boxes or not is_po_box(a.address, a.extended_address)]


# A business is shown only when the person is one of its related persons; an address it shares with
# the person and a registration filing rank it higher.
MATCH_BAR = 0.6
_PERSON, _SHARED_ADDRESS, _REGISTERED = 0.6, 0.3, 0.1


def business_score(
    business: Business, first: str | None, last: str | None, addresses: Sequence[Address]
) -> float:
    person = (fold(first), fold(last))
    score = 0.0
    if (
        first
        and last
        and any((fold(given), fold(family)) == person for given, family in business.related_persons)
    ):
        score += _PERSON
    postal = {fold(a.postal_code)[:5] for a in addresses if a.postal_code}
    if business.address and business.address.postal_code and fold(business.address.postal_code)[:5] in postal:
        score += _SHARED_ADDRESS
    if business.registration:
        score += _REGISTERED
    return round(score, 2)


def ranked_businesses(identity: Identity, first: str | None, last: str | None) -> list[Business]:
    """The identity's businesses that meet the bar, most relevant first (then by name)."""
    scored = [(business_score(b, first, last, identity.addresses), b) for b in identity.businesses]
    return [
        b
        for score, b in sorted(scored, key=lambda pair: (-pair[0], fold(pair[1].name)))
        if score >= MATCH_BAR
    ]
