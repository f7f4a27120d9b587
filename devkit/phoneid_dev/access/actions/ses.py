"""SES's sends (v1 and v2) as IAM authorizes them: on the sender's identities, with its address and
recipients as condition keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from email.utils import parseaddr
from typing import Any

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack, Value

MAPPERS = Mappers()


def _ses_identities(call: Call, address: str) -> list[str]:
    """The sender's identities: SES sends as the address, or as its domain when only that is
    verified; which one the operator verified is not the template's to know, so both."""
    domain = address.rpartition("@")[2]
    prefix = f"arn:aws:ses:{call.region}:{call.account}:identity"
    return [f"{prefix}/{address}", f"{prefix}/{domain}"]


def _ses_requests(call: Call, address: str, recipients: Sequence[str], version: str) -> list[Request]:
    context: dict[str, Value] = {
        "ses:FromAddress": address,
        "ses:Recipients": tuple(sorted(set(recipients))),
        "ses:ApiVersion": version,
    }
    return [Request("ses:SendEmail", identity, context) for identity in _ses_identities(call, address)]


def _destinations(destination: Mapping[str, Any] | None) -> list[str]:
    found = []
    for field_name in ("ToAddresses", "CcAddresses", "BccAddresses"):
        found += [parseaddr(address)[1] for address in (destination or {}).get(field_name) or ()]
    return found


@MAPPERS.maps("sesv2", "SendEmail")
def _sesv2_send(call: Call, _: Stack) -> list[Request]:
    address = parseaddr(str(call.params["FromEmailAddress"]))[1]
    return _ses_requests(call, address, _destinations(call.params.get("Destination")), "2")


@MAPPERS.maps("ses", "SendEmail", "SendRawEmail")
def _ses_send(call: Call, _: Stack) -> list[Request]:
    address = parseaddr(str(call.params["Source"]))[1]
    recipients = _destinations(call.params.get("Destination")) + list(call.params.get("Destinations") or ())
    requests = _ses_requests(call, address, recipients, "1")
    return [Request(f"ses:{call.operation}", r.resource, r.context) for r in requests]
