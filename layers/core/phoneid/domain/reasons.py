"""The API's evaluation failure reason codes: each code's category and meaning. Fixed by the API;
the policy decides when each is raised, never what it means."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class Category(StrEnum):
    IDENTIFICATION = "identification"
    AUTHENTICATION = "authentication"
    COMPLIANCE = "compliance"
    RISK = "risk"


_I, _A, _C, _R = Category.IDENTIFICATION, Category.AUTHENTICATION, Category.COMPLIANCE, Category.RISK

REASONS: Mapping[int, tuple[Category, str]] = {
    9001: (_I, "Identity not confirmed with 4 elements"),
    9003: (_I, "Identity not found"),
    9004: (_I, "Identity not confirmed with 4 elements using a secondary source"),
    9005: (_I, "Identity not confirmed with 4 elements using more than one source"),
    9011: (_I, "Identity confirmed with fewer than 4 elements only"),
    9012: (_I, "SSN mismatch"),
    9013: (_I, "Birth date mismatch"),
    9014: (_I, "Name mismatch"),
    9015: (_I, "Address mismatch"),
    9081: (_I, "SSN issued before birth date"),
    9082: (_I, "Address is a correctional facility"),
    9083: (_I, "Deceased indicator present"),
    9100: (_A, "Phone possession incomplete"),
    9101: (_A, "Phone number does not match the key; rebind required"),
    9131: (_A, "Number listed as a non-mobile line on an override registry"),
    9132: (_A, "Number's SMS contents are posted publicly"),
    9133: (_A, "Phone untrusted by SIM key trust score"),
    9134: (_A, "Non-fixed VoIP number"),
    9135: (_A, "Possible takeover: SIM swap under 24 hours"),
    9136: (_A, "Possible takeover: port under 24 hours"),
    9137: (_A, "Possible takeover: call forwarding enabled"),
    9161: (_A, "Short tenure between number and identity"),
    9162: (_A, "Short tenure between number and identity"),
    9163: (_A, "Possible recycled phone: many identities, newer owner present"),
    9164: (_A, "Possible recycled phone: no recent association and a disconnect after it"),
    9165: (_A, "Possible recycled phone: newer owner and a disconnect after association"),
    9166: (_A, "Address is a correctional facility"),
    9167: (_A, "Deceased indicator present"),
    9168: (_A, "Person verification shows phone ownership not verified"),
    9171: (_A, "Possible injection: 2 identities with short tenure"),
    9172: (_A, "Possible injection: 3 identities with short tenure"),
    9173: (_A, "Possible injection: 4 identities with short tenure"),
    9174: (_A, "Possible injection: 5 or more identities with short tenure"),
    9175: (_A, "No active identity associated with the number"),
    9176: (_A, "Number and identity strongly linked to bot activity"),
    9177: (_A, "No information for identity or number"),
    9180: (_A, "Phone ownership not confirmed with 4 elements"),
    9181: (_A, "Phone ownership not confirmed with fewer than 4 elements"),
    9201: (_C, "Anti-money-laundering alerts present"),
    9301: (_R, "No historical behavioural activity"),
    9302: (_R, "Suspiciously large recent activity"),
    9303: (_R, "Unusual number of recent carrier number-change events"),
    9304: (_R, "Suspiciously large recent activity across identity attributes"),
}


def describe(code: int) -> str:
    return REASONS[code][1]
