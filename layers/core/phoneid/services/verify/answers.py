"""What the API says of a verification: the fields a single answer and a batch item share, and the
identity, signals and businesses as shown (never the SSN or the date of birth)."""

from __future__ import annotations

from typing import Any

from phoneid.api.verify_models import (
    AddressOut,
    BusinessOut,
    Champion,
    IdentityOut,
    ModelOutcome,
    PersonOut,
    RegistrationOut,
)
from phoneid.domain.identity import Address, Business
from phoneid.domain.verification import shown_addresses
from phoneid.services.staged import wire_evaluation
from phoneid.services.verify.verifier import Verified


def answer(verified: Verified) -> dict[str, Any]:
    """What a single answer and a batch item both say of a verification."""
    return {
        "success": "true" if verified.success else "false",
        "phoneNumber": verified.phone_number,
        "isEnrolled": verified.enrolled,
        "serviceId": verified.service_id,
        "servicePhoneAlias": verified.phone_alias,
        "identity": _identity_out(verified),
        "evaluation": wire_evaluation(verified.evaluation),
        "signals": _signals_out(verified),
    }


def _address_out(address: Address) -> AddressOut:
    return AddressOut(
        address=address.address,
        extendedAddress=address.extended_address,
        city=address.city,
        region=address.region,
        postalCode=address.postal_code,
    )


def _identity_out(verified: Verified) -> IdentityOut:
    """The records' identity as shown: names, addresses (PO Boxes per the client's flag) and emails;
    never the SSN or the date of birth."""
    identity = verified.identity
    return IdentityOut(
        firstName=identity.first_name if identity else None,
        lastName=identity.last_name if identity else None,
        assuranceLevel=verified.assurance.level,
        reasons=list(verified.assurance.reasons),
        addresses=[_address_out(a) for a in shown_addresses(identity.addresses, po_boxes=verified.po_boxes)]
        if identity
        else None,
        emails=list(identity.email_addresses) if identity else None,
    )


def _signals_out(verified: Verified) -> list[dict[str, ModelOutcome]]:
    kind = verified.item.verification_type.value
    return [{kind: ModelOutcome(champion=Champion(label=verified.label.value))}]


def business_out(business: Business) -> BusinessOut:
    registration = dict(business.registration)
    return BusinessOut(
        businessName=business.name,
        tradeName=business.trade_name,
        taxId=business.tax_id,
        businessAddress=_address_out(business.address) if business.address else None,
        registrationFiling=RegistrationOut(**registration) if registration else None,
        relatedPersons=[PersonOut(firstName=f, lastName=last) for f, last in business.related_persons]
        or None,
    )
