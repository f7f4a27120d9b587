"""Composition root: builds the real adapters once per container, on first use.

Every part is a cached property, so nothing is built (and no client made) at import time; each
part imports its own module when it is first asked for, so a handler loads only the services and
adapters it uses. Tests replace parts with ``override(clock=FakeClock(), ...)`` and start over with
``reset()``.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from phoneid.config import Settings

if TYPE_CHECKING:
    from phoneid.adapters.camara_signals import CamaraNetworkClient
    from phoneid.domain.offer import MethodOffer
    from phoneid.domain.sandbox import Catalogue
    from phoneid.domain.tokens import Audience
    from phoneid.ports import (
        ActivityLog,
        BatchStates,
        CallForwardingSource,
        CarrierVerifier,
        ChangeEventLog,
        ClientStore,
        Clock,
        CodeMac,
        ConnectProfiles,
        DeviceKeyStore,
        DeviceStatusSource,
        EnrollmentStore,
        IdentitySource,
        IdentityStore,
        KeyedDigest,
        KeySealer,
        KycMatchSource,
        Mailer,
        MonitorStateStore,
        NumberRecyclingSource,
        ObjectStore,
        PiiCipher,
        RateLimiter,
        RefreshTokenStore,
        SessionStore,
        SignalLists,
        SigningKeyMaker,
        SimSwapSource,
        SmsSender,
        SocketNotifier,
        TenureSource,
        TokenKeyStore,
        TokenSigner,
        VerificationKeys,
        WebhookQueue,
        WebhookSender,
    )
    from phoneid.services.budget import SendBudget
    from phoneid.services.clients import ClientAdmin
    from phoneid.services.connect import ConnectBatches
    from phoneid.services.connect_onboarding import ConnectOnboarding, PresignedUrls, SftpUsers
    from phoneid.services.devicekeys import DeviceKeyClient
    from phoneid.services.identities import IdentityImport
    from phoneid.services.identity_manager import IdentityManager
    from phoneid.services.monitor import ChangeMonitor
    from phoneid.services.policies import PolicyBook
    from phoneid.services.possession import Possession
    from phoneid.services.ratelimit import AuthThrottle, RateLimit
    from phoneid.services.sessions import SessionSteps
    from phoneid.services.signal_lists import SignalListImport
    from phoneid.services.signals import Gatherer
    from phoneid.services.staged import Stack, StagedFlow
    from phoneid.services.token_keys import TokenKeyRotation
    from phoneid.services.tokens import TokenService
    from phoneid.services.unify import UnifyFlow
    from phoneid.services.verify import VerifyService
    from phoneid.services.webhooks import WebhookDelivery


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
    def token_key_store(self) -> TokenKeyStore:
        from phoneid.adapters.dynamodb.token_keys import DynamoTokenKeyStore

        return DynamoTokenKeyStore(self.dynamodb, self.settings.token_keys_table)

    @cached_property
    def key_sealer(self) -> KeySealer:
        from phoneid.adapters.kms import KmsKeySealer

        return KmsKeySealer(self.kms, self.settings.token_signing_key_id)

    @cached_property
    def signing_key_maker(self) -> SigningKeyMaker:
        from phoneid.adapters.es256 import Es256Keys

        return Es256Keys()

    @cached_property
    def signer(self) -> TokenSigner:
        from phoneid.adapters.aws import new_client
        from phoneid.adapters.lambda_invoke import LambdaRotationTrigger
        from phoneid.services.token_keys import WindowSigningKeys

        trigger = LambdaRotationTrigger(new_client("lambda"), self.settings.token_keys_function)
        return WindowSigningKeys(
            self.token_key_store, self.key_sealer, self.signing_key_maker, trigger, self.clock
        )

    @cached_property
    def verification_keys(self) -> VerificationKeys:
        from phoneid.services.token_keys import PublishedTokenKeys

        return PublishedTokenKeys(self.token_key_store, self.clock)

    @cached_property
    def token_key_rotation(self) -> TokenKeyRotation:
        from phoneid.services.token_keys import TokenKeyRotation

        return TokenKeyRotation(self.token_key_store, self.key_sealer, self.signing_key_maker, self.clock)

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
    def enrollment_store(self) -> EnrollmentStore:
        """Identity Manager's identities; also the numbers' history for the fraud policy."""
        from phoneid.adapters.dynamodb.enrollments import DynamoEnrollmentStore

        return DynamoEnrollmentStore(self.dynamodb, self.settings.enrollments_table, self.cipher)

    @cached_property
    def catalogue(self) -> Catalogue | None:
        from phoneid.domain.sandbox import Catalogue

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
    def otp_mac(self) -> CodeMac:
        """Each code is MACed twice (sent, entered): under a key derived once per instance."""
        from phoneid.adapters.kms import DerivedKeyMac, OneTimeCodeMac

        derived = DerivedKeyMac(self.kms, self.settings.otp_mac_key_id, purpose="one-time-code")
        return OneTimeCodeMac(derived, self.code_mac)  # codes KMS MACed before are checked by KMS

    @cached_property
    def alias_mac(self) -> KeyedDigest:
        """Phone aliases are computed per verified row, so locally under a key derived once."""
        from phoneid.adapters.kms import DerivedKeyMac

        return DerivedKeyMac(self.kms, self.settings.otp_mac_key_id, purpose="phone-alias")

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

    # --- the carrier's fraud signals (CAMARA); Sandbox scripts its signals elsewhere -------------

    @cached_property
    def camara_network(self) -> CamaraNetworkClient | None:
        """One client (one cached token) for every CAMARA signal API; None when not configured."""
        from phoneid.adapters.camara_signals import DEFAULT_TIMEOUT_SECONDS, CamaraNetworkClient

        if self.catalogue is not None or not self.settings.carrier_signals_configured:
            return None
        return CamaraNetworkClient(
            self._operator_config, self.settings.camara_network_api_url, timeout=DEFAULT_TIMEOUT_SECONDS
        )

    @cached_property
    def sim_swap(self) -> SimSwapSource | None:
        from phoneid.adapters.camara_signals import CamaraSimSwap

        return CamaraSimSwap(self.camara_network) if self.camara_network else None

    @cached_property
    def call_forwarding(self) -> CallForwardingSource | None:
        from phoneid.adapters.camara_signals import CamaraCallForwarding

        return CamaraCallForwarding(self.camara_network) if self.camara_network else None

    @cached_property
    def tenure(self) -> TenureSource | None:
        from phoneid.adapters.camara_signals import CamaraTenure

        return CamaraTenure(self.camara_network) if self.camara_network else None

    @cached_property
    def number_recycling(self) -> NumberRecyclingSource | None:
        from phoneid.adapters.camara_signals import CamaraNumberRecycling

        return CamaraNumberRecycling(self.camara_network) if self.camara_network else None

    @cached_property
    def kyc_match(self) -> KycMatchSource | None:
        from phoneid.adapters.camara_signals import CamaraKycMatch

        return CamaraKycMatch(self.camara_network) if self.camara_network else None

    @cached_property
    def device_status(self) -> DeviceStatusSource | None:
        from phoneid.adapters.camara_signals import CamaraDeviceStatus

        return CamaraDeviceStatus(self.camara_network) if self.camara_network else None

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

    # --- the operator's lists and PhoneID's own records of checks and change events -------------

    @cached_property
    def signal_lists(self) -> SignalLists:
        from phoneid.adapters.dynamodb.lists import DynamoSignalLists

        return DynamoSignalLists(self.dynamodb, self.settings.signal_lists_table)

    @cached_property
    def activity_log(self) -> ActivityLog:
        from phoneid.adapters.dynamodb.activity import DynamoActivityLog

        return DynamoActivityLog(self.dynamodb, self.settings.activity_table, self.clock)

    @cached_property
    def change_events(self) -> ChangeEventLog:
        from phoneid.adapters.dynamodb.activity import DynamoChangeEventLog

        return DynamoChangeEventLog(self.dynamodb, self.settings.activity_table, self.clock)

    @cached_property
    def signal_list_import(self) -> SignalListImport:
        from phoneid.services.signal_lists import SignalListImport

        return SignalListImport(self.signal_lists, self.code_mac, self.settings.region)

    @cached_property
    def signals(self) -> Gatherer:
        """Sandbox scripts each test user's signals; production asks every source the policy needs."""
        from phoneid.services.signals import ScriptedSignals, SignalGatherer, SignalSources

        if self.catalogue is not None:
            return ScriptedSignals(self.catalogue)
        sources = SignalSources(
            lists=self.signal_lists,
            activity=self.activity_log,
            change_events=self.change_events,
            history=self.enrollment_store,
            identities=self.identities,
            mac=self.code_mac,
            sim_swap=self.sim_swap,
            call_forwarding=self.call_forwarding,
            tenure=self.tenure,
            recycling=self.number_recycling,
            kyc=self.kyc_match,
            device_status=self.device_status,
        )
        return SignalGatherer(sources, self.clock)

    @cached_property
    def policies(self) -> PolicyBook:
        from phoneid.services.policies import PolicyBook

        return PolicyBook(self.clients, self.clock)

    # --- services ----------------------------------------------------------------------------

    @cached_property
    def audience(self) -> Audience:
        from phoneid.domain.tokens import Audience

        return Audience(self.settings.tier, self.settings.region)

    @cached_property
    def tokens(self) -> TokenService:
        from phoneid.services.tokens import TokenService

        return TokenService(
            clients=self.clients,
            refresh_tokens=self.refresh_tokens,
            signer=self.signer,
            keys=self.verification_keys,
            clock=self.clock,
            audience=self.audience,
        )

    @cached_property
    def rate_limit(self) -> RateLimit:
        from phoneid.services.ratelimit import RateLimit

        return RateLimit(self.rate_limiter, self.clock)

    @cached_property
    def auth_throttle(self) -> AuthThrottle:
        from phoneid.services.ratelimit import AuthThrottle

        return AuthThrottle(self.rate_limiter, self.clock)

    @cached_property
    def client_admin(self) -> ClientAdmin:
        from phoneid.services.clients import ClientAdmin

        return ClientAdmin(
            self.clients,
            self.clock,
            self.settings.tier,
            self.settings.region,
            cipher=self.cipher,
            loopback_webhooks=self.settings.local_stack,
        )

    @cached_property
    def identity_import(self) -> IdentityImport:
        from phoneid.services.identities import IdentityImport

        return IdentityImport(self.identity_store, self.settings.region)

    @cached_property
    def identity_manager(self) -> IdentityManager:
        from phoneid.services.identity_manager import IdentityManager

        return IdentityManager(
            store=self.enrollment_store,
            clock=self.clock,
            region=self.settings.region,
            page_mac=self.page_key_mac,
        )

    @cached_property
    def page_key_mac(self) -> KeyedDigest:
        """List page keys are MACed locally under a key derived once, on the first page that needs
        one (a listing that fits one page calls no KMS)."""
        from phoneid.adapters.kms import DerivedKeyMac
        from phoneid.services.page_keys import PURPOSE

        return DerivedKeyMac(self.kms, self.settings.otp_mac_key_id, purpose=PURPOSE)

    @cached_property
    def steps(self) -> SessionSteps:
        from phoneid.services.sessions import SessionSteps

        return SessionSteps(self.sessions, self.clock)

    @cached_property
    def stack(self) -> Stack:
        from phoneid.services.staged import Stack

        return Stack(self.settings.tier, self.settings.region)

    @cached_property
    def budget(self) -> SendBudget:
        from phoneid.services.budget import SendBudget

        return SendBudget(
            self.rate_limiter,
            self.clock,
            per_number=self.settings.sms_per_number_per_hour,
            per_client=self.settings.sms_per_client_per_hour,
        )

    @cached_property
    def possession(self) -> Possession:
        from phoneid.services.possession import Possession

        return Possession(
            steps=self.steps,
            sessions=self.sessions,
            clients=self.clients,
            catalogue=self.catalogue,
            sms=self.sms,
            mac=self.otp_mac,
            carrier=self.carrier,
            notifier=self.notifier,
            budget=self.budget,
            clock=self.clock,
            stack=self.stack,
            websocket_url=self.settings.websocket_url,
            offer=self.method_offer,
        )

    @cached_property
    def device_key_client(self) -> DeviceKeyClient:
        from phoneid.services.devicekeys import DeviceKeyClient

        return DeviceKeyClient(
            steps=self.steps,
            device_keys=self.device_keys,
            catalogue=self.catalogue,
            possession=self.possession,
            clock=self.clock,
            inactivity=timedelta(days=self.settings.key_inactivity_days),
        )

    @cached_property
    def unify(self) -> UnifyFlow:
        from phoneid.services.unify import UnifyFlow

        return UnifyFlow(
            staged=self.staged,
            steps=self.steps,
            sessions=self.sessions,
            device_keys=self.device_keys,
            catalogue=self.catalogue,
            signals=self.signals,
            policies=self.policies,
            mac=self.code_mac,
            clock=self.clock,
        )

    @cached_property
    def staged(self) -> StagedFlow:
        from phoneid.services.staged import StagedFlow

        return StagedFlow(
            steps=self.steps,
            sessions=self.sessions,
            identities=self.identities,
            catalogue=self.catalogue,
            signer=self.signer,
            clock=self.clock,
            audience=self.audience,
            signals=self.signals,
            policies=self.policies,
            offer=self.method_offer,
        )

    @cached_property
    def method_offer(self) -> MethodOffer:
        from phoneid.domain.offer import MethodOffer

        runs = self.catalogue is not None or self.settings.mobile_auth_configured
        return MethodOffer(self.catalogue, runs, self.settings.region)

    @cached_property
    def verify(self) -> VerifyService:
        from phoneid.services.verify import ITEM_WORKERS, VerifyService

        return VerifyService(
            region=self.settings.region,
            catalogue=self.catalogue,
            identities=self.identities,
            signals=self.signals,
            policies=self.policies,
            identity_manager=self.identity_manager,
            aliases=self.alias_mac,
            # The Sandbox decides from its catalogue in memory: threads would only wait for each other.
            item_workers=1 if self.catalogue is not None else ITEM_WORKERS,
        )

    # --- change-event webhooks ----------------------------------------------------------------

    @cached_property
    def sqs(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("sqs")

    @cached_property
    def webhook_queue(self) -> WebhookQueue:
        from phoneid.adapters.sqs import SqsWebhookQueue

        return SqsWebhookQueue(self.sqs, self.settings.webhook_queue_url)

    @cached_property
    def webhook_sender(self) -> WebhookSender:
        """Loopback receivers only on the local stack (its setting); every other stack delivers to
        public addresses only."""
        from phoneid.adapters.webhook_http import HttpWebhookSender, SystemResolver

        return HttpWebhookSender(resolver=SystemResolver(), allow_loopback=self.settings.local_stack)

    @cached_property
    def monitor_states(self) -> MonitorStateStore:
        """Kept on the identities themselves, by the enrollment store."""
        from phoneid.adapters.dynamodb.enrollments import DynamoEnrollmentStore

        return DynamoEnrollmentStore(self.dynamodb, self.settings.enrollments_table, self.cipher)

    @cached_property
    def monitor(self) -> ChangeMonitor:
        """Sandbox stacks have no carrier ports: the monitor asks the lists and the numbering plan."""
        from phoneid.services.monitor import ChangeMonitor, MonitorSources

        return ChangeMonitor(
            enrollments=self.enrollment_store,
            states=self.monitor_states,
            sources=MonitorSources(
                lists=self.signal_lists,
                sim_swap=self.sim_swap,
                recycling=self.number_recycling,
                device_status=self.device_status,
            ),
            change_events=self.change_events,
            queue=self.webhook_queue,
            clients=self.clients,
            clock=self.clock,
        )

    @cached_property
    def webhook_delivery(self) -> WebhookDelivery:
        from phoneid.services.webhooks import WebhookDelivery

        return WebhookDelivery(
            clients=self.clients,
            cipher=self.cipher,
            sender=self.webhook_sender,
            queue=self.webhook_queue,
            clock=self.clock,
        )

    # --- Connect onboarding ------------------------------------------------------------------

    @cached_property
    def connect_profiles(self) -> ConnectProfiles:
        from phoneid.adapters.dynamodb.connect_profiles import DynamoConnectProfiles

        return DynamoConnectProfiles(self.dynamodb, self.settings.connect_profiles_table)

    @cached_property
    def sftp_users(self) -> SftpUsers | None:
        """Transfer Family users: only the operator's CLI against a deployed stack gives them
        (``override(sftp_users=...)``); the local SFTP server reads the profiles instead."""
        return None

    @cached_property
    def presigned_urls(self) -> PresignedUrls:
        """URLs of the Connect bucket signed with this process's credentials (the operator's CLI)."""
        from phoneid.adapters.s3_urls import S3PresignedUrls, signing_client

        return S3PresignedUrls(signing_client(), self.settings.connect_bucket)

    @cached_property
    def connect_onboarding(self) -> ConnectOnboarding:
        from phoneid.domain.connect import ConnectTransport
        from phoneid.services.connect_onboarding import ConnectOnboarding

        transport = self.settings.connect_transport
        return ConnectOnboarding(
            self.connect_profiles,
            self.clients,
            self.clock,
            transfer=self.sftp_users,
            transport=transport,
            urls=self.presigned_urls if transport is ConnectTransport.S3 else None,
        )

    # --- Connect batches (the workflow's steps) ----------------------------------------------

    @cached_property
    def s3(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("s3")

    @cached_property
    def ses(self) -> Any:
        from phoneid.adapters.aws import new_client

        return new_client("sesv2")

    @cached_property
    def objects(self) -> ObjectStore:
        """The Connect bucket."""
        from phoneid.adapters.s3 import S3ObjectStore

        return S3ObjectStore(self.s3, self.settings.connect_bucket)

    @cached_property
    def mailer(self) -> Mailer:
        from phoneid.adapters.ses import SesMailer

        return SesMailer(self.ses, self.settings.connect_email_sender)

    @cached_property
    def batch_states(self) -> BatchStates:
        from phoneid.adapters.dynamodb.connect_batches import DynamoBatchStates

        return DynamoBatchStates(self.dynamodb, self.settings.connect_batches_table)

    @cached_property
    def connect(self) -> ConnectBatches:
        """A batch row is verified exactly as ``/v3/verify`` verifies one item (same service, policy)."""
        return self.connect_batches()

    def connect_batches(self, **changes: Any) -> ConnectBatches:
        """Connect's service wired as here, with ``changes`` (a test's verify, its chunk size)."""
        from phoneid.services.connect import ConnectBatches

        wiring: dict[str, Any] = {
            "objects": self.objects,
            "states": self.batch_states,
            "profiles": self.connect_profiles,
            "mailer": self.mailer,
            "clients": self.clients,
            "verify": self.verify.verify_many,
            "clock": self.clock,
            "region": self.settings.region,
            "operator_emails": self.settings.operator_emails,
        }
        return ConnectBatches(**(wiring | changes))


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
