"""Sandbox adapters: scripted test users stand in for identity data and carrier signals."""

from __future__ import annotations

from phoneid.domain.identity import Identity
from phoneid.domain.sandbox import Catalogue


class CatalogueIdentitySource:
    def __init__(self, catalogue: Catalogue) -> None:
        self._catalogue = catalogue

    def find(self, phone_number: str) -> Identity | None:
        user = self._catalogue.find(phone_number)
        return user.identity if user else None
