"""What a carrier (Mobile Auth) check can say."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Redirect:
    """The device must fetch this URL over its mobile data connection."""

    url: str


@dataclass(frozen=True)
class CarrierResult:
    verified: bool
    phone_number: str | None  # the device's number, when the network told it
