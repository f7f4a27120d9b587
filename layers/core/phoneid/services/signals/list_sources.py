"""The operator's lists as sources: the number's line type, the lists a number can be on (public
SMS, bots, deceased owners, SIM trust, ports) and those a person can be on (AML, SSN issuance,
correctional addresses, deceased)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from phoneid.domain import lists
from phoneid.domain.identity import Address, ssn_digits
from phoneid.domain.policy import Signal
from phoneid.domain.signals import ListKind
from phoneid.services.signals.request import Request, hours_since
from phoneid.services.signals.source import OwnSource, Source

_NUMBER_LIST_SIGNALS = frozenset(
    {
        Signal.PUBLIC_SMS,
        Signal.SIM_TRUST_SCORE,
        Signal.PORT_HOURS_AGO,
        Signal.BOT_LINKED,
        Signal.NUMBER_OWNER_DECEASED,
    }
)
_PERSON_LIST_SIGNALS = frozenset(
    {
        Signal.AML_LISTED,
        Signal.SSN_ISSUED_BEFORE_BIRTH,
        Signal.CLAIMED_ADDRESS_CORRECTIONAL,
        Signal.NUMBER_ADDRESS_CORRECTIONAL,
        Signal.IDENTITY_DECEASED,
    }
)


def _line_type(request: Request) -> dict[Signal, Any]:
    phone = request.phone
    entry = request.sources.lists.lookup(ListKind.LINE_TYPES, [lists.phone_key(phone)]).get(
        lists.phone_key(phone)
    )
    registered = entry.values.get("lineType") if entry else None
    return {
        Signal.LINE_TYPE_REGISTRY: registered,
        Signal.LINE_TYPE: registered or lists.number_line_type(phone),
    }


def _number_lists(request: Request) -> dict[Signal, Any]:
    wanted = request.wanted
    phone = lists.phone_key(request.phone)
    look = request.sources.lists.lookup
    observed: dict[Signal, Any] = {}
    if Signal.PUBLIC_SMS in wanted:
        observed[Signal.PUBLIC_SMS] = phone in look(ListKind.PUBLIC_SMS, [phone])
    if Signal.BOT_LINKED in wanted:
        observed[Signal.BOT_LINKED] = phone in look(ListKind.BOT_NUMBERS, [phone])
    if Signal.NUMBER_OWNER_DECEASED in wanted:
        observed[Signal.NUMBER_OWNER_DECEASED] = phone in look(ListKind.DECEASED, [phone])
    if Signal.SIM_TRUST_SCORE in wanted:
        trust = look(ListKind.SIM_TRUST, [phone]).get(phone)
        observed[Signal.SIM_TRUST_SCORE] = trust.values.get("score") if trust else None
    if Signal.PORT_HOURS_AGO in wanted:
        port = look(ListKind.PORT_EVENTS, [phone]).get(phone)
        ported = datetime.fromisoformat(str(port.values["portedAt"])) if port else None
        observed[Signal.PORT_HOURS_AGO] = hours_since(request.now, ported)
    return observed


def _person_lists(request: Request) -> dict[Signal, Any]:
    wanted = request.wanted
    claimed, record = request.person()
    look = request.sources.lists.lookup
    observed: dict[Signal, Any] = {}
    first = claimed.first_name or (record.first_name if record else None)
    last = claimed.last_name or (record.last_name if record else None)
    full_dob = claimed.dob if claimed.dob and len(claimed.dob) == 10 else (record.dob if record else None)
    ssn = ssn_digits(claimed.ssn) if claimed.ssn and len(ssn_digits(claimed.ssn)) == 9 else None
    ssn = ssn or (record.ssn if record else None)
    if Signal.AML_LISTED in wanted and first and last:
        keys = lists.name_key(first, last, full_dob)
        observed[Signal.AML_LISTED] = bool(look(ListKind.AML, keys))
    if Signal.SSN_ISSUED_BEFORE_BIRTH in wanted and ssn and full_dob:
        group = lists.ssn_area_group(ssn)
        issuance = look(ListKind.SSN_ISSUANCE, [group]).get(group)
        # Numbers of an area and group were issued between issuedFrom and issuedTo: when the last
        # of them went out before the birth date, this SSN was issued before its holder was born.
        issued_by = issuance.values.get("issuedTo") if issuance else None
        observed[Signal.SSN_ISSUED_BEFORE_BIRTH] = issued_by is not None and str(issued_by) < full_dob
    if Signal.IDENTITY_DECEASED in wanted and ssn:
        key = request.sources.mac.digest(lists.ssn_mac_input(ssn))
        observed[Signal.IDENTITY_DECEASED] = key in look(ListKind.DECEASED, [key])
    if Signal.CLAIMED_ADDRESS_CORRECTIONAL in wanted and claimed.addresses:
        observed[Signal.CLAIMED_ADDRESS_CORRECTIONAL] = _correctional(look, claimed.addresses)
    if Signal.NUMBER_ADDRESS_CORRECTIONAL in wanted and record is not None and record.addresses:
        observed[Signal.NUMBER_ADDRESS_CORRECTIONAL] = _correctional(look, record.addresses)
    return observed


def _correctional(
    look: Callable[[ListKind, list[str]], Mapping[str, Any]], addresses: Iterable[Address]
) -> bool:
    keys = [
        key
        for a in addresses
        if a.address
        for key in lists.address_keys(a.address, a.postal_code, a.city, a.region)
    ]
    return bool(keys) and bool(look(ListKind.CORRECTIONAL_ADDRESSES, keys))


LIST_SOURCES: tuple[Source, ...] = (
    OwnSource("line-type", "lists", frozenset({Signal.LINE_TYPE, Signal.LINE_TYPE_REGISTRY}), _line_type),
    OwnSource("number-lists", "lists", _NUMBER_LIST_SIGNALS, _number_lists),
    OwnSource("person-lists", "lists", _PERSON_LIST_SIGNALS, _person_lists),
)
