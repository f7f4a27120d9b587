"""What a rule may test: the signals, and where each comes from."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class Signal(StrEnum):
    """Everything a rule may test. docs/fraud-policy.md says where each comes from."""

    # computed from the request, the flow and the identity records
    POSSESSION = "possession"
    KEY_MISMATCH = "keyMismatch"
    IDENTITY_FOUND = "identityFound"
    IDENTITY_MISMATCHES = "identityMismatches"
    IDENTITY_CONFIRMED_ELEMENTS = "identityConfirmedElements"
    SSN_MATCH = "ssnMatch"
    DOB_MATCH = "dobMatch"
    NAME_MATCH = "nameMatch"
    ADDRESS_MATCH = "addressMatch"
    SOURCES_WITH_MISMATCH = "sourcesWithMismatch"
    ACTIVE_IDENTITY = "activeIdentity"
    ANY_INFORMATION = "anyInformation"
    # the carrier, through CAMARA
    SIM_SWAP_HOURS_AGO = "simSwapHoursAgo"
    CALL_FORWARDING = "callForwarding"
    TENURE_DAYS = "tenureDays"
    NUMBER_RECYCLED = "numberRecycled"
    KYC_NAME_MATCH = "kycNameMatch"
    KYC_ELEMENTS_SUPPLIED = "kycElementsSupplied"
    KYC_ELEMENTS_UNCONFIRMED = "kycElementsUnconfirmed"
    SECONDARY_SOURCE_MISMATCHES = "secondarySourceMismatches"
    NETWORK_REACHABLE = "networkReachable"
    # line type: the operator's override registry, else the numbering plan
    LINE_TYPE = "lineType"
    LINE_TYPE_REGISTRY = "lineTypeRegistry"
    # lists the operator maintains
    PUBLIC_SMS = "publicSms"
    SIM_TRUST_SCORE = "simTrustScore"
    PORT_HOURS_AGO = "portHoursAgo"
    BOT_LINKED = "botLinked"
    AML_LISTED = "amlListed"
    SSN_ISSUED_BEFORE_BIRTH = "ssnIssuedBeforeBirth"
    CLAIMED_ADDRESS_CORRECTIONAL = "claimedAddressCorrectional"
    NUMBER_ADDRESS_CORRECTIONAL = "numberAddressCorrectional"
    IDENTITY_DECEASED = "identityDeceased"
    NUMBER_OWNER_DECEASED = "numberOwnerDeceased"
    # PhoneID's own records: Identity Manager, verifications and change events
    IDENTITIES_ON_NUMBER = "identitiesOnNumber"
    SHORT_TENURE_IDENTITIES_ON_NUMBER = "shortTenureIdentitiesOnNumber"
    DAYS_SINCE_ASSOCIATION = "daysSinceAssociation"
    DISCONNECT_SINCE_ASSOCIATION = "disconnectSinceAssociation"
    PRIOR_ACTIVITY = "priorActivity"
    RECENT_CHECKS = "recentChecks"
    RECENT_CHECKS_SHARING_ATTRIBUTES = "recentChecksSharingAttributes"
    NUMBER_CHANGE_EVENTS = "numberChangeEvents"
    # reason codes a data partner reported for the number, loaded with the identity records
    PARTNER_FINDINGS = "partnerFindings"


# Where each signal comes from, as docs/fraud-policy.md says it.
SIGNAL_SOURCES: Mapping[Signal, str] = {
    Signal.POSSESSION: "the flow's possession check",
    Signal.KEY_MISMATCH: "the device key (unified authentication)",
    Signal.IDENTITY_FOUND: "identity records",
    Signal.IDENTITY_MISMATCHES: "identity records",
    Signal.IDENTITY_CONFIRMED_ELEMENTS: "identity records",
    Signal.SSN_MATCH: "identity records",
    Signal.DOB_MATCH: "identity records",
    Signal.NAME_MATCH: "identity records",
    Signal.ADDRESS_MATCH: "identity records",
    Signal.SOURCES_WITH_MISMATCH: "identity records and carrier KYC Match",
    Signal.ACTIVE_IDENTITY: "identity records and Identity Manager",
    Signal.ANY_INFORMATION: "identity records, Identity Manager and the activity log",
    Signal.SIM_SWAP_HOURS_AGO: "carrier: CAMARA SIM Swap",
    Signal.CALL_FORWARDING: "carrier: CAMARA Call Forwarding Signal",
    Signal.TENURE_DAYS: "carrier: CAMARA KYC Tenure",
    Signal.NUMBER_RECYCLED: "carrier: CAMARA Number Recycling",
    Signal.KYC_NAME_MATCH: "carrier: CAMARA KYC Match",
    Signal.KYC_ELEMENTS_SUPPLIED: "carrier: CAMARA KYC Match",
    Signal.KYC_ELEMENTS_UNCONFIRMED: "carrier: CAMARA KYC Match",
    Signal.SECONDARY_SOURCE_MISMATCHES: "carrier: CAMARA KYC Match",
    Signal.NETWORK_REACHABLE: "carrier: CAMARA Device Reachability Status",
    Signal.LINE_TYPE: "list `line-types`, else the numbering plan",
    Signal.LINE_TYPE_REGISTRY: "list `line-types`",
    Signal.PUBLIC_SMS: "list `public-sms`",
    Signal.SIM_TRUST_SCORE: "list `sim-trust`",
    Signal.PORT_HOURS_AGO: "list `port-events`",
    Signal.BOT_LINKED: "list `bot-numbers`",
    Signal.AML_LISTED: "list `aml`",
    Signal.SSN_ISSUED_BEFORE_BIRTH: "list `ssn-issuance`",
    Signal.CLAIMED_ADDRESS_CORRECTIONAL: "list `correctional-addresses`",
    Signal.NUMBER_ADDRESS_CORRECTIONAL: "list `correctional-addresses`",
    Signal.IDENTITY_DECEASED: "list `deceased`",
    Signal.NUMBER_OWNER_DECEASED: "list `deceased`",
    Signal.IDENTITIES_ON_NUMBER: "Identity Manager",
    Signal.SHORT_TENURE_IDENTITIES_ON_NUMBER: "Identity Manager",
    Signal.DAYS_SINCE_ASSOCIATION: "Identity Manager",
    Signal.DISCONNECT_SINCE_ASSOCIATION: "Identity Manager and change events",
    Signal.PRIOR_ACTIVITY: "activity log",
    Signal.RECENT_CHECKS: "activity log",
    Signal.RECENT_CHECKS_SHARING_ATTRIBUTES: "activity log",
    Signal.NUMBER_CHANGE_EVENTS: "change events",
    Signal.PARTNER_FINDINGS: "identity records (`reputationReasons`)",
}
