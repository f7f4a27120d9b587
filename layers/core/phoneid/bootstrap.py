"""Composition root: builds the real adapters once per container, on first use.

Every part is a cached property, so nothing is built (and no client made) at import time. Tests
replace parts with ``override(clock=FakeClock(), ...)`` and start over with ``reset()``.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from phoneid.config import Settings

if TYPE_CHECKING:
    pass
from phoneid.domain.sandbox import Catalogue
from phoneid.domain.tokens import Audience
from phoneid.ports import (
    CarrierVerifier,
    ClientStore,
    Clock,
    CodeMac,
    DeviceKeyStore,
    IdentitySource,
    IdentityStore,
    PiiCipher,
    RateLimiter,
    RefreshTokenStore,
    ReputationSource,
    SessionStore,
    SmsSender,
    SocketNotifier,
    TokenSigner,
)
from phoneid.services.budget import SendBudget
from phoneid.services.clients import ClientAdmin
from phoneid.services.devicekeys import DeviceKeyClient
from phoneid.services.identities import IdentityImport
from phoneid.services.possession import Possession
from phoneid.services.ratelimit import RateLimit
from phoneid.services.sessions import SessionSteps
from phoneid.services.staged import Stack, StagedFlow
from phoneid.services.tokens import TokenService
from phoneid.services.unify import UnifyFlow


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
    def sns(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("sns")

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

        return DynamoSessionStore(
            self.dynamodb, self.settings.sessions_table, self.cipher, self.device_key_store
        )

    @cached_property
    def device_key_store(self) -> Any:
        from phoneid.adapters.dynamodb import DynamoDeviceKeyStore

        return DynamoDeviceKeyStore(self.dynamodb, self.settings.device_keys_table)

    @property
    def device_keys(self) -> DeviceKeyStore:
        return self.device_key_store  # type: ignore[no-any-return]

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
    def reputation(self) -> ReputationSource:
        """Sandbox scripts reputation; production reads findings loaded with the identities."""
        from phoneid.adapters.dynamodb import DynamoIdentityStore
        from phoneid.adapters.sandbox import CatalogueReputation

        if self.catalogue is not None:
            return CatalogueReputation(self.catalogue)
        return DynamoIdentityStore(self.dynamodb, self.settings.identities_table, self.cipher)

    @cached_property
    def rate_limiter(self) -> RateLimiter:
        from phoneid.adapters.dynamodb import DynamoRateLimiter

        return DynamoRateLimiter(self.dynamodb, self.settings.rate_limits_table)

    @cached_property
    def sms(self) -> SmsSender:
        """Sandbox stacks publish to a topic; only production texts phones."""
        from phoneid.adapters.sns import SnsSmsSender, TopicSmsSender

        if self.settings.tier == "sandbox":
            return TopicSmsSender(self.sns, self.settings.sandbox_sms_topic_arn)
        return SnsSmsSender(self.sns)

    @cached_property
    def code_mac(self) -> CodeMac:
        from phoneid.adapters.kms import KmsCodeMac

        return KmsCodeMac(self.kms, self.settings.otp_mac_key_id)

    @cached_property
    def carrier(self) -> CarrierVerifier | None:
        """Sandbox scripts Mobile Auth; production uses the operator when one is configured."""
        from phoneid.adapters.camara import CamaraCarrierVerifier
        from phoneid.adapters.sandbox import SandboxCarrierVerifier

        if self.catalogue is not None:
            return SandboxCarrierVerifier(self.catalogue)
        if not self.settings.mobile_auth_configured:
            return None
        return CamaraCarrierVerifier(self._operator_config)

    def _operator_config(self) -> Any:
        import json

        from phoneid.adapters.aws import new_client
        from phoneid.adapters.camara import OperatorConfig

        if "_operator" not in self.__dict__:
            secret = new_client("secretsmanager").get_secret_value(
                SecretId=self.settings.camara_credentials_secret
            )
            credentials = json.loads(secret["SecretString"])
            self.__dict__["_operator"] = OperatorConfig(
                authorize_url=self.settings.camara_authorize_url,
                token_url=self.settings.camara_token_url,
                api_base_url=self.settings.camara_api_url.rstrip("/"),
                client_id=credentials["clientId"],
                client_secret=credentials["clientSecret"],
            )
        return self.__dict__["_operator"]

    @cached_property
    def notifier(self) -> SocketNotifier:
        from phoneid.adapters.aws import new_client
        from phoneid.adapters.websocket import ApiGatewaySocketNotifier

        clients: dict[str, Any] = {}

        def client_for(endpoint: str) -> Any:
            if endpoint not in clients:
                clients[endpoint] = new_client("apigatewaymanagementapi", endpoint_url=endpoint)
            return clients[endpoint]

        return ApiGatewaySocketNotifier(client_for)

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
    def stack(self) -> Stack:
        return Stack(self.settings.tier, self.settings.region)

    @cached_property
    def budget(self) -> SendBudget:
        return SendBudget(
            self.rate_limiter,
            self.clock,
            per_number=self.settings.sms_per_number_per_hour,
            per_client=self.settings.sms_per_client_per_hour,
        )

    @cached_property
    def possession(self) -> Possession:
        return Possession(
            steps=self.steps,
            sessions=self.sessions,
            clients=self.clients,
            catalogue=self.catalogue,
            sms=self.sms,
            mac=self.code_mac,
            carrier=self.carrier,
            notifier=self.notifier,
            budget=self.budget,
            clock=self.clock,
            stack=self.stack,
            websocket_url=self.settings.websocket_url,
        )

    @cached_property
    def device_key_client(self) -> DeviceKeyClient:
        return DeviceKeyClient(
            steps=self.steps,
            clients=self.clients,
            device_keys=self.device_keys,
            catalogue=self.catalogue,
            possession=self.possession,
            clock=self.clock,
            inactivity=timedelta(days=self.settings.key_inactivity_days),
        )

    @cached_property
    def unify(self) -> UnifyFlow:
        return UnifyFlow(
            staged=self.staged,
            steps=self.steps,
            sessions=self.sessions,
            device_keys=self.device_keys,
            catalogue=self.catalogue,
            reputation=self.reputation,
            mac=self.code_mac,
            clock=self.clock,
        )

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
