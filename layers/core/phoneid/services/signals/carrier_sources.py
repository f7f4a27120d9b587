"""The operator's sources (CAMARA): SIM swap, call forwarding, tenure, recycling, KYC Match and
reachability, each through its own port."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from phoneid.domain.identity import Address, Claimed, ssn_digits
from phoneid.domain.policy import Bounds, Signal
from phoneid.domain.signals import KycClaim
from phoneid.ports import (
    CallForwardingSource,
    DeviceStatusSource,
    KycMatchSource,
    NumberRecyclingSource,
    SimSwapSource,
    TenureSource,
)
from phoneid.services.signals.request import Request, hours_since
from phoneid.services.signals.source import CarrierSource, Source
from phoneid.services.signals.subject import Subject

_KYC_SIGNALS = frozenset(
    {
        Signal.KYC_NAME_MATCH,
        Signal.KYC_ELEMENTS_SUPPLIED,
        Signal.KYC_ELEMENTS_UNCONFIRMED,
        Signal.SECONDARY_SOURCE_MISMATCHES,
    }
)


def _sim_swap(port: SimSwapSource, request: Request) -> dict[Signal, Any]:
    latest = port.latest_change(request.phone)
    return {Signal.SIM_SWAP_HOURS_AGO: hours_since(request.now, latest)}


def _call_forwarding(port: CallForwardingSource, request: Request) -> dict[Signal, Any]:
    return {Signal.CALL_FORWARDING: port.unconditional(request.phone)}


def _tenure(port: TenureSource, request: Request) -> dict[Signal, Any]:
    """The carrier answers "held since date D?"; ask it once per threshold the policy compares with."""
    today = request.now.date()
    answers = {
        days: port.held_since(request.phone, today - timedelta(days=days))
        for days in request.policy.thresholds(Signal.TENURE_DAYS)
    }
    return {Signal.TENURE_DAYS: Bounds(answers)}


def _recycling(port: NumberRecyclingSource, request: Request) -> dict[Signal, Any]:
    """Recycled since the number was first tied to an identity here; nothing to ask without one."""
    first = request.history().first_associated
    if first is None:
        return {}
    return {Signal.NUMBER_RECYCLED: port.recycled_since(request.phone, first)}


def _claim(subject: Subject) -> KycClaim:
    claimed = subject.claimed or Claimed()
    address = claimed.addresses[0] if claimed.addresses else Address()
    return KycClaim(
        given_name=claimed.first_name,
        family_name=claimed.last_name,
        birthdate=claimed.dob if claimed.dob and len(claimed.dob) == 10 else None,
        id_document=claimed.ssn if claimed.ssn and len(ssn_digits(claimed.ssn)) == 9 else None,
        address=address.address,
        postal_code=address.postal_code,
        locality=address.city,
        region=address.region,
        email=subject.email,
    )


def _kyc(port: KycMatchSource, request: Request) -> dict[Signal, Any]:
    claim = _claim(request.subject)
    if not claim.supplied():
        return {Signal.KYC_ELEMENTS_SUPPLIED: 0, Signal.KYC_ELEMENTS_UNCONFIRMED: 0}
    result = port.match(request.phone, claim)
    # Only what the operator answered counts: "not_available" confirms nothing and denies nothing.
    answered = {element: answer for element, answer in result.elements().items() if answer != "not_available"}
    observed: dict[Signal, Any] = {
        Signal.KYC_ELEMENTS_SUPPLIED: len(answered),
        Signal.KYC_ELEMENTS_UNCONFIRMED: sum(1 for answer in answered.values() if answer == "false"),
        # The person's own attributes (birth date, SSN, address) disagreeing: identification.
        Signal.SECONDARY_SOURCE_MISMATCHES: sum(
            1 for element, answer in answered.items() if element != "name" and answer == "false"
        ),
    }
    if result.name is not None:
        observed[Signal.KYC_NAME_MATCH] = result.name
    return observed


def _reachability(port: DeviceStatusSource, request: Request) -> dict[Signal, Any]:
    return {Signal.NETWORK_REACHABLE: port.reachable(request.phone)}


CARRIER_SOURCES: tuple[Source, ...] = (
    CarrierSource(
        "sim-swap", frozenset({Signal.SIM_SWAP_HOURS_AGO}), lambda ports: ports.sim_swap, _sim_swap
    ),
    CarrierSource(
        "call-forwarding",
        frozenset({Signal.CALL_FORWARDING}),
        lambda ports: ports.call_forwarding,
        _call_forwarding,
    ),
    CarrierSource("tenure", frozenset({Signal.TENURE_DAYS}), lambda ports: ports.tenure, _tenure),
    CarrierSource(
        "recycling", frozenset({Signal.NUMBER_RECYCLED}), lambda ports: ports.recycling, _recycling
    ),
    CarrierSource("kyc-match", _KYC_SIGNALS, lambda ports: ports.kyc, _kyc),
    CarrierSource(
        "reachability",
        frozenset({Signal.NETWORK_REACHABLE}),
        lambda ports: ports.device_status,
        _reachability,
    ),
)
