# The API's request and answer bodies, generated from docs/openapi.json by datamodel-code-generator.
# Do not edit: regenerate with `make sdk-models` (clients/python/tools/generate_models.py).

from __future__ import annotations

from datetime import date as date_aliased
from ipaddress import IPv4Address, IPv6Address
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypeAliasType

Address = TypeAliasType("Address", Annotated[str, Field(max_length=256, title="Address")])


City = TypeAliasType("City", Annotated[str, Field(max_length=128, title="City")])


PostalCode = TypeAliasType("PostalCode", Annotated[str, Field(max_length=32, title="Postalcode")])


Region = TypeAliasType("Region", Annotated[str, Field(max_length=64, title="Region")])


class AddressModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    address: Annotated[Address | None, Field(title="Address")] = None
    city: Annotated[City | None, Field(title="City")] = None
    postalCode: Annotated[PostalCode | None, Field(title="Postalcode")] = None
    region: Annotated[Region | None, Field(title="Region")] = None


class AddressOut(BaseModel):
    address: Annotated[str | None, Field(title="Address")] = None
    city: Annotated[str | None, Field(title="City")] = None
    extendedAddress: Annotated[str | None, Field(title="Extendedaddress")] = None
    postalCode: Annotated[str | None, Field(title="Postalcode")] = None
    region: Annotated[str | None, Field(title="Region")] = None


class BatchResult(BaseModel):
    error: Annotated[str | None, Field(title="Error")] = None
    serviceId: Annotated[str | None, Field(title="Serviceid")] = None


class CategoryResult(BaseModel):
    failureReasons: Annotated[dict[str, str] | None, Field(title="Failurereasons")] = None
    result: Annotated[Literal["pass", "fail"], Field(title="Result")]


ClientRequestId = TypeAliasType(
    "ClientRequestId", Annotated[str, Field(max_length=128, min_length=1, title="Clientrequestid")]
)
"""
Echoed in error responses to tie them to the caller's request
"""


Dob = TypeAliasType(
    "Dob",
    Annotated[
        str,
        Field(
            pattern="^(?:(?:19|2[0-9])[0-9]{2}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31|02-29)|(?:19|2[0-9])[0-9]{2}-(?:0[1-9]|1[0-2])|(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31|02-29))$",
            title="Dob",
        ),
    ],
)
"""
YYYY-MM-DD, YYYY-MM or MM-DD: an existing date from 1900, not after today (UTC)
"""


Ssn = TypeAliasType(
    "Ssn",
    Annotated[
        str,
        Field(
            pattern="^(?:(?:00[1-9]|0[1-9][0-9]|[1-57-9][0-9][0-9]|6[0-57-9][0-9]|66[0-57-9])(?:0[1-9]|[1-9][0-9])(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9][0-9]|[1-9][0-9]{3})|(?:00[1-9]|0[1-9][0-9]|[1-57-9][0-9][0-9]|6[0-57-9][0-9]|66[0-57-9])-(?:0[1-9]|[1-9][0-9])-(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9][0-9]|[1-9][0-9]{3})|(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9][0-9]|[1-9][0-9]{3}))$",
            title="Ssn",
        ),
    ],
)
"""
Full SSN (9 digits or 123-45-6789) or its last four; never area 000 or 666, group 00 or serial 0000
"""


class ChallengeRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    correlationId: Annotated[
        str,
        Field(
            pattern="^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", title="Correlationid"
        ),
    ]
    dob: Annotated[Dob | None, Field(title="Dob")] = None
    ssn: Annotated[Ssn | None, Field(title="Ssn")] = None


class Champion(BaseModel):
    label: Annotated[str, Field(title="Label")]


class CompleteResponse(BaseModel):
    evaluation: Annotated[dict[str, CategoryResult] | None, Field(title="Evaluation")] = None
    next: Annotated[dict[str, str] | None, Field(title="Next")] = None
    success: Annotated[bool, Field(title="Success")]


class Conversion(BaseModel):
    attempted: Annotated[int, Field(title="Attempted")]
    rate: Annotated[float | None, Field(title="Rate")] = None
    """
    succeeded / attempted; absent when none was attempted
    """
    succeeded: Annotated[int, Field(title="Succeeded")]


class CorrelationRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    correlationId: Annotated[
        str,
        Field(
            pattern="^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", title="Correlationid"
        ),
    ]


class DayCounts(BaseModel):
    day: Annotated[str, Field(title="Day")]
    errors: Annotated[int, Field(title="Errors")]
    failed: Annotated[int, Field(title="Failed")]
    passed: Annotated[int, Field(title="Passed")]
    total: Annotated[int, Field(title="Total")]


class DecisionEraseResponse(BaseModel):
    erased: Annotated[int, Field(title="Erased")]
    """
    How many of the number's records were erased
    """


class DecisionSummaryResponse(BaseModel):
    byDay: Annotated[list[DayCounts] | None, Field(title="Byday")] = None
    byKind: Annotated[dict[str, int] | None, Field(title="Bykind")] = None
    byReasonCode: Annotated[dict[str, int] | None, Field(title="Byreasoncode")] = None
    conversion: Annotated[dict[str, Conversion] | None, Field(title="Conversion")] = None
    """
    sms: texts sent → verified; instantLink: sent → opened; mobileAuth: tried → passed
    """
    errors: Annotated[int, Field(title="Errors")]
    failed: Annotated[int, Field(title="Failed")]
    firstDay: Annotated[str, Field(title="Firstday")]
    lastDay: Annotated[str, Field(title="Lastday")]
    passed: Annotated[int, Field(title="Passed")]
    total: Annotated[int, Field(title="Total")]


class DeviceKeyView(BaseModel):
    deviceId: Annotated[str | None, Field(title="Deviceid")] = None
    nonce: Annotated[str, Field(title="Nonce")]
    registerKey: Annotated[bool, Field(title="Registerkey")]


class EnrollResponse(BaseModel):
    serviceId: Annotated[str, Field(title="Serviceid")]
    success: Annotated[Literal[True], Field(title="Success")] = True


class ErrorBody(BaseModel):
    clientRequestId: Annotated[str | None, Field(title="Clientrequestid")] = None
    code: Annotated[int, Field(title="Code")]
    correlationId: Annotated[str | None, Field(title="Correlationid")] = None
    message: Annotated[str, Field(title="Message")]
    next: Annotated[dict[str, str] | None, Field(title="Next")] = None


class FactShown(BaseModel):
    """
    A fact whole: its value may be null (observed as nothing), so nothing is left out.
    """

    asOf: Annotated[str, Field(title="Asof")]
    signal: Annotated[str, Field(title="Signal")]
    source: Annotated[str, Field(title="Source")]
    value: Annotated[Any, Field(title="Value")]
    """
    The observed value; {"sourceFailed": true} when its source failed
    """


class FlowChoice(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    flowType: Annotated[Literal["desktop", "mobile"] | None, Field(title="Flowtype")] = None


class IdentityAttribute(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    attributeType: Annotated[str, Field(max_length=64, min_length=1, title="Attributetype")]
    attributeValue: Annotated[str, Field(max_length=256, min_length=1, title="Attributevalue")]


class IdentityAttributeModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    attributeType: Annotated[str, Field(max_length=64, min_length=1, title="Attributetype")]
    attributeValue: Annotated[str, Field(max_length=256, min_length=1, title="Attributevalue")]


ClientCustomerId = TypeAliasType(
    "ClientCustomerId", Annotated[str, Field(max_length=128, min_length=1, title="Clientcustomerid")]
)
"""
The client's id of the customer: one identity per clientCustomerId
"""


ClientHumanId = TypeAliasType(
    "ClientHumanId", Annotated[str, Field(max_length=128, min_length=1, title="Clienthumanid")]
)


DeviceId = TypeAliasType("DeviceId", Annotated[str, Field(pattern="^[A-Za-z0-9_-]{8,64}$", title="Deviceid")])
"""
The device key's deviceId (unify)
"""


FirstName = TypeAliasType("FirstName", Annotated[str, Field(max_length=128, min_length=1, title="Firstname")])


IdentityAttributes = TypeAliasType(
    "IdentityAttributes",
    Annotated[list[IdentityAttributeModel], Field(max_length=10, title="Identityattributes")],
)


LastName = TypeAliasType("LastName", Annotated[str, Field(max_length=128, min_length=1, title="Lastname")])


class IdentityBatchItem(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientCustomerId: Annotated[ClientCustomerId | None, Field(title="Clientcustomerid")] = None
    """
    The client's id of the customer: one identity per clientCustomerId
    """
    clientHumanId: Annotated[ClientHumanId | None, Field(title="Clienthumanid")] = None
    deviceId: Annotated[DeviceId | None, Field(title="Deviceid")] = None
    """
    The device key's deviceId (unify)
    """
    firstName: Annotated[FirstName | None, Field(title="Firstname")] = None
    identityAttributes: Annotated[IdentityAttributes | None, Field(title="Identityattributes")] = None
    lastName: Annotated[LastName | None, Field(title="Lastname")] = None
    phoneNumber: Annotated[
        str, Field(max_length=32, min_length=1, pattern="^ *\\+?[0-9 ().-]*$", title="Phonenumber")
    ]
    """
    E.164 (+12025550123); a US stack also takes national digits. The number must be valid for its country code
    """


class IdentityBatchRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    items: Annotated[
        list[IdentityBatchItem | dict[str, Any]], Field(max_length=100, min_length=1, title="Items")
    ]


class IdentityEnrollRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientCustomerId: Annotated[ClientCustomerId | None, Field(title="Clientcustomerid")] = None
    """
    The client's id of the customer: one identity per clientCustomerId
    """
    clientHumanId: Annotated[ClientHumanId | None, Field(title="Clienthumanid")] = None
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    deviceId: Annotated[DeviceId | None, Field(title="Deviceid")] = None
    """
    The device key's deviceId (unify)
    """
    firstName: Annotated[FirstName | None, Field(title="Firstname")] = None
    identityAttributes: Annotated[IdentityAttributes | None, Field(title="Identityattributes")] = None
    lastName: Annotated[LastName | None, Field(title="Lastname")] = None
    phoneNumber: Annotated[
        str, Field(max_length=32, min_length=1, pattern="^ *\\+?[0-9 ().-]*$", title="Phonenumber")
    ]
    """
    E.164 (+12025550123); a US stack also takes national digits. The number must be valid for its country code
    """


class IdentityOut(BaseModel):
    addresses: Annotated[list[AddressOut] | None, Field(title="Addresses")] = None
    assuranceLevel: Annotated[str, Field(title="Assurancelevel")]
    emails: Annotated[list[str] | None, Field(title="Emails")] = None
    firstName: Annotated[str | None, Field(title="Firstname")] = None
    lastName: Annotated[str | None, Field(title="Lastname")] = None
    reasons: Annotated[list[str] | None, Field(title="Reasons")] = None


class IdentityStatusRequest(BaseModel):
    """
    activate and deactivate: nothing but the optional clientRequestId.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """


class IdentitySummary(BaseModel):
    active: Annotated[bool, Field(title="Active")]
    clientCustomerId: Annotated[str | None, Field(title="Clientcustomerid")] = None
    phoneNumber: Annotated[str, Field(title="Phonenumber")]
    serviceId: Annotated[str, Field(title="Serviceid")]


class IdentityView(BaseModel):
    active: Annotated[bool, Field(title="Active")]
    clientCustomerId: Annotated[str | None, Field(title="Clientcustomerid")] = None
    clientHumanId: Annotated[str | None, Field(title="Clienthumanid")] = None
    countryCode: Annotated[str, Field(title="Countrycode")]
    createdAt: Annotated[int, Field(title="Createdat")]
    """
    Unix seconds
    """
    creationString: Annotated[str, Field(title="Creationstring")]
    """
    ISO-8601, UTC
    """
    deviceId: Annotated[str | None, Field(title="Deviceid")] = None
    lineType: Annotated[str | None, Field(title="Linetype")] = None
    phoneNumber: Annotated[str, Field(title="Phonenumber")]
    serviceId: Annotated[str, Field(title="Serviceid")]


Addresses = TypeAliasType("Addresses", Annotated[list[AddressModel], Field(max_length=10, title="Addresses")])


Dob1 = TypeAliasType("Dob1", Annotated[date_aliased, Field(title="Dob")])
"""
YYYY-MM-DD: an existing date from 1900, not after today (UTC)
"""


EmailAddress = TypeAliasType("EmailAddress", Annotated[str, Field(pattern="^[^@\\s]{1,64}@[^@\\s]{1,255}$")])


EmailAddresses = TypeAliasType(
    "EmailAddresses", Annotated[list[EmailAddress], Field(max_length=10, title="Emailaddresses")]
)


FirstName2 = TypeAliasType("FirstName2", Annotated[str, Field(max_length=128, title="Firstname")])


LastName2 = TypeAliasType("LastName2", Annotated[str, Field(max_length=128, title="Lastname")])


class Individual(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    addresses: Annotated[Addresses | None, Field(title="Addresses")] = None
    dob: Annotated[Dob1 | None, Field(title="Dob")] = None
    emailAddresses: Annotated[EmailAddresses | None, Field(title="Emailaddresses")] = None
    firstName: Annotated[FirstName2 | None, Field(title="Firstname")] = None
    lastName: Annotated[LastName2 | None, Field(title="Lastname")] = None
    ssn: Annotated[Ssn | None, Field(title="Ssn")] = None
    """
    Full SSN, or the last four a production challenge returned (matched as last four)
    """


EmailAddresses1Item = TypeAliasType(
    "EmailAddresses1Item", Annotated[str, Field(pattern="^[^@\\s]{1,64}@[^@\\s]{1,255}$")]
)


EmailAddresses1 = TypeAliasType(
    "EmailAddresses1", Annotated[list[EmailAddresses1Item], Field(max_length=10, title="Emailaddresses")]
)


class IndividualOut(BaseModel):
    """
    The individual as returned: production tiers return only the last four of the SSN, which
    ``complete`` accepts back.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    addresses: Annotated[Addresses | None, Field(title="Addresses")] = None
    dob: Annotated[Dob1 | None, Field(title="Dob")] = None
    emailAddresses: Annotated[EmailAddresses1 | None, Field(title="Emailaddresses")] = None
    firstName: Annotated[FirstName2 | None, Field(title="Firstname")] = None
    lastName: Annotated[LastName2 | None, Field(title="Lastname")] = None
    ssn: Annotated[Ssn | None, Field(title="Ssn")] = None
    """
    Full SSN, or the last four a production challenge returned (matched as last four)
    """


class InstantLinkView(BaseModel):
    expiresAt: Annotated[str | None, Field(title="Expiresat")] = None
    sendsLeft: Annotated[int, Field(title="Sendsleft")]
    sent: Annotated[bool, Field(title="Sent")]
    websocketUrl: Annotated[str | None, Field(title="Websocketurl")] = None


PublicApiKey = TypeAliasType(
    "PublicApiKey", Annotated[str, Field(max_length=128, min_length=1, title="Publicapikey")]
)
"""
web SDKs: the client's public API key
"""


class KeyProofRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    deviceId: Annotated[str, Field(pattern="^[A-Za-z0-9_-]{8,64}$", title="Deviceid")]
    publicApiKey: Annotated[PublicApiKey | None, Field(title="Publicapikey")] = None
    """
    web SDKs: the client's public API key
    """
    signature: Annotated[str, Field(pattern="^[A-Za-z0-9_-]{80,90}$", title="Signature")]
    """
    base64url r||s over the nonce
    """


PublicApiKey1 = TypeAliasType(
    "PublicApiKey1", Annotated[str, Field(max_length=128, min_length=1, title="Publicapikey")]
)


class KeyRegistrationRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    publicApiKey: Annotated[PublicApiKey1 | None, Field(title="Publicapikey")] = None
    publicKey: Annotated[dict[str, str], Field(title="Publickey")]
    """
    P-256 public JWK
    """
    signature: Annotated[str, Field(pattern="^[A-Za-z0-9_-]{80,90}$", title="Signature")]


class KeyRegistrationResponse(BaseModel):
    deviceId: Annotated[str, Field(title="Deviceid")]


class LookupResponse(BaseModel):
    items: Annotated[list[IdentityView] | None, Field(title="Items")] = None


class MobileAuthView(BaseModel):
    status: Annotated[Literal["not-tried", "redirect", "passed", "failed"], Field(title="Status")]
    url: Annotated[str | None, Field(title="Url")] = None


class ModelOutcome(BaseModel):
    champion: Champion


class NumberShown(BaseModel):
    """
    The number as a record shows it: never whole.
    """

    country: Annotated[str, Field(title="Country")]
    lastTwo: Annotated[str, Field(title="Lasttwo")]


class OtpRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    otp: Annotated[str, Field(pattern="^[0-9]{4,6}$", title="Otp")]


class OtpView(BaseModel):
    entriesLeft: Annotated[int, Field(title="Entriesleft")]
    expiresAt: Annotated[str | None, Field(title="Expiresat")] = None
    length: Annotated[int, Field(title="Length")]
    sendsLeft: Annotated[int, Field(title="Sendsleft")]
    sent: Annotated[bool, Field(title="Sent")]


class PersonOut(BaseModel):
    firstName: Annotated[str, Field(title="Firstname")]
    lastName: Annotated[str, Field(title="Lastname")]


PhoneNumber = TypeAliasType(
    "PhoneNumber",
    Annotated[str, Field(max_length=32, min_length=1, pattern="^ *\\+?[0-9 ().-]*$", title="Phonenumber")],
)
"""
E.164 (+12025550123); a US stack also takes national digits. The number must be valid for its country code
"""


class PhoneNumberRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    phoneNumber: Annotated[PhoneNumber | None, Field(title="Phonenumber")] = None


class PolicyShown(BaseModel):
    hash: Annotated[str, Field(title="Hash")]
    """
    SHA-256 of the policy document's content (canonical JSON), hex
    """
    id: Annotated[str, Field(title="Id")]
    version: Annotated[str, Field(title="Version")]


class PossessionShown(BaseModel):
    deviceKey: Annotated[Literal["used", "bound"] | None, Field(title="Devicekey")] = None
    linkOpened: Annotated[bool, Field(title="Linkopened")]
    linksSent: Annotated[int, Field(title="Linkssent")]
    method: Annotated[
        Literal["mobile-auth", "otp", "instant-link", "preset"] | None, Field(title="Method")
    ] = None
    mobileAuth: Annotated[Literal["not-tried", "redirected", "passed", "failed"], Field(title="Mobileauth")]
    otpEntries: Annotated[int, Field(title="Otpentries")]
    smsSent: Annotated[int, Field(title="Smssent")]
    status: Annotated[Literal["passed", "failed", "pending", "not-asked"], Field(title="Status")]


class RegistrationOut(BaseModel):
    date: Annotated[str | None, Field(title="Date")] = None
    region: Annotated[str | None, Field(title="Region")] = None
    registrationNumber: Annotated[str | None, Field(title="Registrationnumber")] = None
    registrationType: Annotated[str | None, Field(title="Registrationtype")] = None


class RevokeRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    deviceId: Annotated[str, Field(pattern="^[A-Za-z0-9_-]{8,64}$", title="Deviceid")]


class RevokeResponse(BaseModel):
    deviceId: Annotated[str, Field(title="Deviceid")]
    success: Annotated[bool, Field(title="Success")]


Dob3 = TypeAliasType(
    "Dob3",
    Annotated[
        str,
        Field(
            pattern="^(?:(?:19|2[0-9])[0-9]{2}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31|02-29)|(?:19|2[0-9])[0-9]{2}-(?:0[1-9]|1[0-2])|(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31|02-29))$",
            title="Dob",
        ),
    ],
)
"""
YYYY-MM-DD, YYYY-MM or MM-DD: an existing date from 1900, not after today (UTC)
"""


FinalTargetUrl = TypeAliasType(
    "FinalTargetUrl",
    Annotated[
        str,
        Field(
            max_length=2048,
            min_length=1,
            pattern="^https?://[A-Za-z0-9\\-._~:/?#\\[\\]@!$&'()*+,;=%]+$",
            title="Finaltargeturl",
        ),
    ],
)
"""
Instant Link redirect; required when flowType is desktop
"""


PhoneNumber1 = TypeAliasType(
    "PhoneNumber1", Annotated[str, Field(max_length=32, pattern="^ *\\+?[0-9 ().-]*$", title="Phonenumber")]
)
"""
E.164 (+12025550123); a US stack also takes national digits. The number must be valid for its country code
"""


SmsMessage = TypeAliasType(
    "SmsMessage",
    Annotated[str, Field(max_length=160, min_length=1, pattern="^[^#{}]*#{4,6}[^#{}]*$", title="Smsmessage")],
)
"""
SMS text with one #### to ###### placeholder for the code, no other # or braces
"""


class StartRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    allowOTPRetry: Annotated[bool | None, Field(title="Allowotpretry")] = False
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    dob: Annotated[Dob3 | None, Field(title="Dob")] = None
    finalTargetUrl: Annotated[FinalTargetUrl | None, Field(title="Finaltargeturl")] = None
    """
    Instant Link redirect; required when flowType is desktop
    """
    flowType: Annotated[Literal["desktop", "mobile"], Field(title="Flowtype")]
    phoneNumber: Annotated[PhoneNumber1 | None, Field(title="Phonenumber")] = None
    smsMessage: Annotated[SmsMessage | None, Field(title="Smsmessage")] = None
    ssn: Annotated[Ssn | None, Field(title="Ssn")] = None


class StartResponse(BaseModel):
    authToken: Annotated[str, Field(title="Authtoken")]
    correlationId: Annotated[str, Field(title="Correlationid")]
    next: Annotated[dict[str, str] | None, Field(title="Next")] = None


class SuccessResponse(BaseModel):
    success: Annotated[Literal[True], Field(title="Success")] = True


class TokenResponse(BaseModel):
    access_token: Annotated[str, Field(title="Access Token")]
    expires_in: Annotated[int, Field(title="Expires In")]
    refresh_expires_in: Annotated[int, Field(title="Refresh Expires In")]
    refresh_token: Annotated[str, Field(title="Refresh Token")]
    token_type: Annotated[Literal["Bearer"], Field(title="Token Type")] = "Bearer"


CorrelationId = TypeAliasType("CorrelationId", Annotated[str, Field(max_length=128, title="Correlationid")])


class UnifyCorrelationRequest(BaseModel):
    """
    unify-status and unify-bind answer a missing or malformed correlationId with 8008 (403), not 8001.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    correlationId: Annotated[CorrelationId | None, Field(title="Correlationid")] = None


ClientCustomerId2 = TypeAliasType(
    "ClientCustomerId2", Annotated[str, Field(max_length=128, min_length=1, title="Clientcustomerid")]
)


DeviceId2 = TypeAliasType(
    "DeviceId2", Annotated[str, Field(pattern="^[A-Za-z0-9_-]{8,64}$", title="Deviceid")]
)


FinalTargetUrl1 = TypeAliasType(
    "FinalTargetUrl1",
    Annotated[
        str,
        Field(
            max_length=2048,
            min_length=1,
            pattern="^https?://[A-Za-z0-9\\-._~:/?#\\[\\]@!$&'()*+,;=%]+$",
            title="Finaltargeturl",
        ),
    ],
)


class UnifyRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    allowOTPRetry: Annotated[bool | None, Field(title="Allowotpretry")] = False
    checkReputation: Annotated[bool | None, Field(title="Checkreputation")] = False
    clientCustomerId: Annotated[ClientCustomerId2 | None, Field(title="Clientcustomerid")] = None
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    deviceId: Annotated[DeviceId2 | None, Field(title="Deviceid")] = None
    finalTargetUrl: Annotated[FinalTargetUrl1 | None, Field(title="Finaltargeturl")] = None
    phoneNumber: Annotated[PhoneNumber1 | None, Field(title="Phonenumber")] = None
    possessionType: Annotated[Literal["mobile", "none"], Field(title="Possessiontype")]
    rebind: Annotated[bool | None, Field(title="Rebind")] = False
    smsMessage: Annotated[SmsMessage | None, Field(title="Smsmessage")] = None


class UnifyResponse(BaseModel):
    authToken: Annotated[str, Field(title="Authtoken")]
    correlationId: Annotated[str, Field(title="Correlationid")]
    success: Annotated[Literal["pending"], Field(title="Success")] = "pending"


class UnifyStatusResponse(BaseModel):
    deviceId: Annotated[str | None, Field(title="Deviceid")] = None
    evaluation: Annotated[dict[str, CategoryResult] | None, Field(title="Evaluation")] = None
    phoneNumber: Annotated[str | None, Field(title="Phonenumber")] = None
    serviceId: Annotated[str | None, Field(title="Serviceid")] = None
    success: Annotated[bool, Field(title="Success")]


class ValidateResponse(BaseModel):
    challengeMissing: Annotated[bool, Field(title="Challengemissing")]
    next: Annotated[dict[str, str] | None, Field(title="Next")] = None
    phoneNumber: Annotated[str | None, Field(title="Phonenumber")] = None
    success: Annotated[bool, Field(title="Success")]


class VerifyBatchRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    items: Annotated[list[dict[str, Any]], Field(max_length=1000, min_length=1, title="Items")]


class VerifyBatchResult(BaseModel):
    assuranceLevel: Annotated[str, Field(title="Assurancelevel")]
    clientCustomerId: Annotated[str | None, Field(title="Clientcustomerid")] = None
    clientHumanId: Annotated[str | None, Field(title="Clienthumanid")] = None
    error: Annotated[str | None, Field(title="Error")] = None
    evaluation: Annotated[dict[str, CategoryResult] | None, Field(title="Evaluation")] = None
    identity: IdentityOut | None = None
    isEnrolled: Annotated[bool | None, Field(title="Isenrolled")] = None
    phoneNumber: Annotated[str, Field(title="Phonenumber")]
    serviceId: Annotated[str | None, Field(title="Serviceid")] = None
    servicePhoneAlias: Annotated[str | None, Field(title="Servicephonealias")] = None
    signals: Annotated[list[dict[str, ModelOutcome]] | None, Field(title="Signals")] = None
    success: Annotated[Literal["true", "false"], Field(title="Success")]


EmailAddress1 = TypeAliasType(
    "EmailAddress1",
    Annotated[
        str,
        Field(
            max_length=254,
            pattern="^[A-Za-z0-9.+_'-]{1,64}@[A-Za-z0-9.-]{1,190}\\.[A-Za-z]{2,}$",
            title="Emailaddress",
        ),
    ],
)


FirstName4 = TypeAliasType(
    "FirstName4", Annotated[str, Field(max_length=128, min_length=1, title="Firstname")]
)


IdentityAttributes2 = TypeAliasType(
    "IdentityAttributes2",
    Annotated[list[IdentityAttribute], Field(max_length=10, title="Identityattributes")],
)


IpAddress1 = TypeAliasType("IpAddress1", Annotated[IPv4Address, Field(title="Ipaddress")])


IpAddress2 = TypeAliasType("IpAddress2", Annotated[IPv6Address, Field(title="Ipaddress")])


IpAddress = TypeAliasType(
    "IpAddress", Annotated[IpAddress1 | IpAddress2, Field(max_length=45, title="Ipaddress")]
)


LastName4 = TypeAliasType("LastName4", Annotated[str, Field(max_length=128, min_length=1, title="Lastname")])


ServiceId = TypeAliasType("ServiceId", Annotated[str, Field(max_length=128, min_length=1, title="Serviceid")])


UserAgent = TypeAliasType("UserAgent", Annotated[str, Field(max_length=512, title="Useragent")])


class VerifyRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientCustomerId: Annotated[ClientCustomerId2 | None, Field(title="Clientcustomerid")] = None
    clientHumanId: Annotated[ClientHumanId | None, Field(title="Clienthumanid")] = None
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    emailAddress: Annotated[EmailAddress1 | None, Field(title="Emailaddress")] = None
    firstName: Annotated[FirstName4 | None, Field(title="Firstname")] = None
    identityAttributes: Annotated[IdentityAttributes2 | None, Field(title="Identityattributes")] = None
    ipAddress: Annotated[IpAddress | None, Field(title="Ipaddress")] = None
    lastName: Annotated[LastName4 | None, Field(title="Lastname")] = None
    phoneNumber: Annotated[
        str, Field(max_length=32, min_length=1, pattern="^ *\\+?[0-9 ().-]*$", title="Phonenumber")
    ]
    """
    E.164 (+12025550123); a US stack also takes national digits. The number must be valid for its country code
    """
    serviceId: Annotated[ServiceId | None, Field(title="Serviceid")] = None
    userAgent: Annotated[UserAgent | None, Field(title="Useragent")] = None
    verificationType: Annotated[
        Literal["verifiedUser", "humanAssurance"], Field(max_length=32, title="Verificationtype")
    ]


class BatchResponse(BaseModel):
    results: Annotated[list[BatchResult] | None, Field(title="Results")] = None


class BusinessOut(BaseModel):
    businessAddress: AddressOut | None = None
    businessName: Annotated[str, Field(title="Businessname")]
    registrationFiling: RegistrationOut | None = None
    relatedPersons: Annotated[list[PersonOut] | None, Field(title="Relatedpersons")] = None
    taxId: Annotated[str | None, Field(title="Taxid")] = None
    tradeName: Annotated[str | None, Field(title="Tradename")] = None


class ChallengeResponse(BaseModel):
    individual: IndividualOut | None = None
    next: Annotated[dict[str, str] | None, Field(title="Next")] = None
    success: Annotated[bool, Field(title="Success")]


class ClientSession(BaseModel):
    """
    What the client SDK needs to run possession for one flow.
    """

    correlationId: Annotated[str, Field(title="Correlationid")]
    deviceKey: DeviceKeyView | None = None
    expiresAt: Annotated[str, Field(title="Expiresat")]
    flowType: Annotated[Literal["desktop", "mobile"], Field(title="Flowtype")]
    instantLink: InstantLinkView | None = None
    lastError: Annotated[str | None, Field(title="Lasterror")] = None
    methods: Annotated[list[Literal["mobile-auth", "otp", "instant-link"]] | None, Field(title="Methods")] = (
        None
    )
    mobileAuth: MobileAuthView | None = None
    numberChangeAllowed: Annotated[bool, Field(title="Numberchangeallowed")]
    otp: OtpView | None = None
    phoneNumberNeeded: Annotated[bool, Field(title="Phonenumberneeded")]
    status: Annotated[Literal["pending", "passed", "failed"], Field(title="Status")]


class CompleteRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
    )
    clientRequestId: Annotated[ClientRequestId | None, Field(title="Clientrequestid")] = None
    """
    Echoed in error responses to tie them to the caller's request
    """
    correlationId: Annotated[
        str,
        Field(
            pattern="^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", title="Correlationid"
        ),
    ]
    individual: Individual


class DecisionSummaryItem(BaseModel):
    """
    A decision as the list shows it.
    """

    endedAt: Annotated[str, Field(title="Endedat")]
    errorCode: Annotated[int | None, Field(title="Errorcode")] = None
    flow: Annotated[str | None, Field(title="Flow")] = None
    """
    The flow type, or the verification type
    """
    id: Annotated[str, Field(title="Id")]
    kind: Annotated[Literal["staged", "unify", "verify", "verify-batch", "connect"], Field(title="Kind")]
    number: NumberShown | None = None
    outcome: Annotated[Literal["pass", "fail", "error"], Field(title="Outcome")]
    reasonCodes: Annotated[list[int] | None, Field(title="Reasoncodes")] = None
    startedAt: Annotated[str, Field(title="Startedat")]
    success: Annotated[bool, Field(title="Success")]


class DecisionView(BaseModel):
    """
    One decision whole.
    """

    clientRequestId: Annotated[str | None, Field(title="Clientrequestid")] = None
    endedAt: Annotated[str, Field(title="Endedat")]
    errorCode: Annotated[int | None, Field(title="Errorcode")] = None
    evaluation: Annotated[dict[str, CategoryResult] | None, Field(title="Evaluation")] = None
    facts: Annotated[list[FactShown] | None, Field(title="Facts")] = None
    flow: Annotated[str | None, Field(title="Flow")] = None
    """
    The flow type, or the verification type
    """
    id: Annotated[str, Field(title="Id")]
    kind: Annotated[Literal["staged", "unify", "verify", "verify-batch", "connect"], Field(title="Kind")]
    monitoredCodes: Annotated[list[int] | None, Field(title="Monitoredcodes")] = None
    number: NumberShown | None = None
    outcome: Annotated[Literal["pass", "fail", "error"], Field(title="Outcome")]
    policy: PolicyShown | None = None
    possession: PossessionShown | None = None
    reasonCodes: Annotated[list[int] | None, Field(title="Reasoncodes")] = None
    region: Annotated[str, Field(title="Region")]
    startedAt: Annotated[str, Field(title="Startedat")]
    step: Annotated[str | None, Field(title="Step")] = None
    """
    The step whose answer ended the flow
    """
    success: Annotated[bool, Field(title="Success")]
    tier: Annotated[str, Field(title="Tier")]


class IdentityListResponse(BaseModel):
    lastKey: Annotated[str | None, Field(title="Lastkey")] = None
    results: Annotated[list[IdentitySummary] | None, Field(title="Results")] = None


class VerifyBatchResponse(BaseModel):
    clientRequestId: Annotated[str | None, Field(title="Clientrequestid")] = None
    correlationId: Annotated[str, Field(title="Correlationid")]
    results: Annotated[list[VerifyBatchResult] | None, Field(title="Results")] = None


class VerifyResponse(BaseModel):
    businesses: Annotated[list[BusinessOut] | None, Field(title="Businesses")] = None
    clientCustomerId: Annotated[str | None, Field(title="Clientcustomerid")] = None
    clientHumanId: Annotated[str | None, Field(title="Clienthumanid")] = None
    clientRequestId: Annotated[str | None, Field(title="Clientrequestid")] = None
    correlationId: Annotated[str, Field(title="Correlationid")]
    evaluation: Annotated[dict[str, CategoryResult] | None, Field(title="Evaluation")] = None
    identity: IdentityOut
    isEnrolled: Annotated[bool, Field(title="Isenrolled")]
    phoneNumber: Annotated[str, Field(title="Phonenumber")]
    serviceId: Annotated[str | None, Field(title="Serviceid")] = None
    servicePhoneAlias: Annotated[str | None, Field(title="Servicephonealias")] = None
    signals: Annotated[list[dict[str, ModelOutcome]] | None, Field(title="Signals")] = None
    success: Annotated[Literal["true", "false"], Field(title="Success")]


class DecisionListResponse(BaseModel):
    lastKey: Annotated[str | None, Field(title="Lastkey")] = None
    """
    Send as startKey for the next page
    """
    results: Annotated[list[DecisionSummaryItem] | None, Field(title="Results")] = None
