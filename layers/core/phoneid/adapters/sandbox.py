"""Sandbox adapters: scripted test users stand in for identity data and carrier signals."""

from __future__ import annotations

import secrets
import urllib.parse

from phoneid.domain.carrier import CarrierResult, Redirect
from phoneid.domain.identity import Identity
from phoneid.domain.sandbox import Catalogue


class CatalogueIdentitySource:
    def __init__(self, catalogue: Catalogue) -> None:
        self._catalogue = catalogue

    def find(self, phone_number: str) -> Identity | None:
        user = self._catalogue.find(phone_number)
        return user.identity if user else None


class SandboxCarrierVerifier:
    """Mobile Auth in Sandbox: the redirect goes straight to our callback, and the scenario decides."""

    def __init__(self, catalogue: Catalogue) -> None:
        self._catalogue = catalogue

    def begin(self, *, state: str, redirect_uri: str, phone_number: str | None) -> Redirect:
        query = urllib.parse.urlencode({"code": f"sandbox-{secrets.token_urlsafe(12)}", "state": state})
        return Redirect(url=f"{redirect_uri}?{query}")

    def finish(self, *, code: str, redirect_uri: str, phone_number: str | None) -> CarrierResult:
        user = self._catalogue.find(phone_number)
        scripted = user is not None and user.signals.get("mobileAuth") == "pass"
        verified = scripted and code.startswith("sandbox-")
        return CarrierResult(verified=verified, phone_number=phone_number)
