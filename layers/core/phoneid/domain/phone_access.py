"""Which numbers a caller may use on this stack: one rule for every endpoint that takes a number."""

from __future__ import annotations

from phoneid.domain.clients import Caller
from phoneid.domain.errors import MalformedRequest, UnauthorizedForCountry
from phoneid.domain.phone import InvalidPhoneNumber, PhoneNumber, Region, parse_phone


def checked_phone(
    caller: Caller, text: str, stack_region: Region, *, field: str = "phoneNumber"
) -> PhoneNumber:
    """A valid number of this stack's region that the caller may serve (8001, 8010 otherwise)."""
    try:
        phone = parse_phone(text, stack_region)
    except InvalidPhoneNumber as error:
        raise MalformedRequest(problems={field: str(error)}) from None
    if phone.region != stack_region:
        raise UnauthorizedForCountry(
            f"Unauthorized for country: numbers of {phone.country} are served by the "
            f"{phone.region} host, not this {stack_region} host"
        )
    if not caller.may_use_country(phone.country):
        raise UnauthorizedForCountry(
            f"Unauthorized for country: these credentials may not serve {phone.country}"
        )
    return phone
