"""Composition root: builds the real adapters once per container, on first use.

Every part is a cached property, so nothing is built (and no client made) at import time. Tests
replace parts with ``override(clock=FakeClock(), ...)`` and start over with ``reset()``.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from phoneid.config import Settings
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.tokens import Audience
from phoneid.ports import (
    ClientStore,
    Clock,
    IdentitySource,
    IdentityStore,
    PiiCipher,
    RateLimiter,
    RefreshTokenStore,
    SessionStore,
    TokenSigner,
)
from phoneid.services.clients import ClientAdmin
from phoneid.services.identities import IdentityImport
from phoneid.services.ratelimit import RateLimit
from phoneid.services.sessions import SessionSteps
from phoneid.services.staged import StagedFlow
from phoneid.services.tokens import TokenService


class Container:
    def __init__(self, settings: Settings, **overrides: Any) -> None:
        self.settings = settings
        self.overrides = overrides
        # A cached_property reads the instance dict first: an override is simply pre-cached.
        self.__dict__.update(overrides)

    # --- AWS clients and ports ---------------------------------------------------------------

    @cached_property
    def dynamodb(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("dynamodb")

    @cached_property
    def kms(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("kms")

    @cached_property
    def clock(self) -> Clock:
        from phoneid.adapters.clock import SystemClock

        return SystemClock()

    @cached_property
    def cipher(self) -> PiiCipher:
        from phoneid.adapters.kms import KmsPiiCipher

        return KmsPiiCipher(self.kms, self.settings.pii_key_id)

    @cached_property
    def signer(self) -> TokenSigner:
        from phoneid.adapters.kms import KmsTokenSigner

        return KmsTokenSigner(self.kms, self.settings.token_signing_key_id)

    @cached_property
    def sessions(self) -> SessionStore:
        from phoneid.adapters.dynamodb import DynamoSessionStore

        return DynamoSessionStore(self.dynamodb, self.settings.sessions_table, self.cipher)

    @cached_property
    def clients(self) -> ClientStore:
        from phoneid.adapters.dynamodb import DynamoClientStore

        return DynamoClientStore(self.dynamodb, self.settings.clients_table)

    @cached_property
    def refresh_tokens(self) -> RefreshTokenStore:
        from phoneid.adapters.dynamodb import DynamoRefreshTokenStore

        return DynamoRefreshTokenStore(self.dynamodb, self.settings.refresh_tokens_table)

    @cached_property
    def identity_store(self) -> IdentityStore:
        from phoneid.adapters.dynamodb import DynamoIdentityStore

        return DynamoIdentityStore(self.dynamodb, self.settings.identities_table, self.cipher)

    @cached_property
    def catalogue(self) -> Catalogue | None:
        return Catalogue.load(self.settings.region) if self.settings.tier == "sandbox" else None

    @cached_property
    def identities(self) -> IdentitySource:
        """Sandbox stacks read the test-user catalogue; production reads the operator's identity table."""
        from phoneid.adapters.sandbox import CatalogueIdentitySource

        if self.catalogue is not None:
            return CatalogueIdentitySource(self.catalogue)
        return self.identity_store

    @cached_property
    def rate_limiter(self) -> RateLimiter:
        from phoneid.adapters.dynamodb import DynamoRateLimiter

        return DynamoRateLimiter(self.dynamodb, self.settings.rate_limits_table)

    # --- services ----------------------------------------------------------------------------

    @cached_property
    def audience(self) -> Audience:
        return Audience(self.settings.tier, self.settings.region)

    @cached_property
    def tokens(self) -> TokenService:
        return TokenService(
            clients=self.clients,
            refresh_tokens=self.refresh_tokens,
            signer=self.signer,
            clock=self.clock,
            audience=self.audience,
        )

    @cached_property
    def rate_limit(self) -> RateLimit:
        return RateLimit(self.rate_limiter, self.clock)

    @cached_property
    def client_admin(self) -> ClientAdmin:
        return ClientAdmin(self.clients, self.clock, self.settings.tier, self.settings.region)

    @cached_property
    def identity_import(self) -> IdentityImport:
        return IdentityImport(self.identity_store, self.settings.region)

    @cached_property
    def steps(self) -> SessionSteps:
        return SessionSteps(self.sessions, self.clock)

    @cached_property
    def staged(self) -> StagedFlow:
        return StagedFlow(
            steps=self.steps,
            sessions=self.sessions,
            identities=self.identities,
            catalogue=self.catalogue,
            signer=self.signer,
            clock=self.clock,
            audience=self.audience,
        )


_container: Container | None = None


def container() -> Container:
    global _container
    if _container is None:
        _container = Container(Settings.from_env())
    return _container


def override(**parts: Any) -> Container:
    """A fresh container with ``parts`` in place of the real ones (earlier overrides kept)."""
    global _container
    current = container()
    _container = Container(current.settings, **{**current.overrides, **parts})
    return _container


def reset() -> None:
    global _container
    _container = None
