"""What reaches the phone network: text messages, Mobile Auth, and the carrier's fraud signals
(CAMARA). A Sandbox stack scripts them all from its catalogue."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.aws import AwsClients

if TYPE_CHECKING:
    from phoneid.adapters.camara import OperatorConfig
    from phoneid.adapters.camara_signals import CamaraNetworkClient
    from phoneid.ports import (
        CallForwardingSource,
        CarrierVerifier,
        DeviceStatusSource,
        KycMatchSource,
        NumberRecyclingSource,
        SimSwapSource,
        SmsSender,
        TenureSource,
    )


class Carrier(AwsClients):
    @cached_property
    def sms(self) -> SmsSender:
        """Sandbox stacks publish to a topic; only production texts phones."""
        from phoneid.adapters.sns import SnsSmsSender, TopicSmsSender

        if self.settings.tier == "sandbox":
            return TopicSmsSender(self.sns, self.settings.sandbox_sms_topic_arn)
        return SnsSmsSender(self.sns)

    @cached_property
    def carrier(self) -> CarrierVerifier | None:
        """Sandbox scripts Mobile Auth; production uses the operator when one is configured."""
        from phoneid.adapters.camara import CamaraCarrierVerifier
        from phoneid.adapters.sandbox import SandboxCarrierVerifier

        if self.catalogue is not None:
            return SandboxCarrierVerifier(self.catalogue)
        if not self.settings.mobile_auth_configured:
            return None
        return CamaraCarrierVerifier(self.operator_config)

    @cached_property
    def operator_config(self) -> Callable[[], OperatorConfig]:
        """The operator's endpoints and credentials, read from Secrets Manager by the first call that
        needs them, once for Mobile Auth and the signals alike."""
        settings = self.settings

        @cache
        def read() -> OperatorConfig:
            import json

            from phoneid.adapters.camara import OperatorConfig

            secret = self.secrets.get_secret_value(SecretId=settings.camara_credentials_secret)
            credentials = json.loads(secret["SecretString"])
            return OperatorConfig(
                authorize_url=settings.camara_authorize_url,
                token_url=settings.camara_token_url,
                api_base_url=settings.camara_api_url.rstrip("/"),
                client_id=credentials["clientId"],
                client_secret=credentials["clientSecret"],
            )

        return read

    # --- the carrier's fraud signals (CAMARA); Sandbox scripts its signals elsewhere -------------

    @cached_property
    def camara_network(self) -> CamaraNetworkClient | None:
        """One client (one cached token) for every CAMARA signal API; None when not configured."""
        from phoneid.adapters.camara_signals import DEFAULT_TIMEOUT_SECONDS, CamaraNetworkClient

        if self.catalogue is not None or not self.settings.carrier_signals_configured:
            return None
        return CamaraNetworkClient(
            self.operator_config, self.settings.camara_network_api_url, timeout=DEFAULT_TIMEOUT_SECONDS
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
