"""The API's flows: possession (codes, links, Mobile Auth), the staged flow, Unify and device keys,
verification and Identity Manager, with the limits that guard them."""

from __future__ import annotations

from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from phoneid.wiring.push import Push
from phoneid.wiring.signals import Signals
from phoneid.wiring.tokens import Tokens

if TYPE_CHECKING:
    from phoneid.domain.offer import MethodOffer
    from phoneid.ports import SocketNotifier
    from phoneid.services.budget import SendBudget
    from phoneid.services.decision_log import DecisionLog
    from phoneid.services.decisions import DecisionBook
    from phoneid.services.devicekeys import DeviceKeyClient
    from phoneid.services.identity_manager import IdentityManager
    from phoneid.services.possession import Possession
    from phoneid.services.ratelimit import AuthThrottle, RateLimit
    from phoneid.services.sessions import SessionSteps
    from phoneid.services.staged import Stack, StagedFlow
    from phoneid.services.unify import UnifyFlow
    from phoneid.services.verify import VerifyService


class Flows(Signals, Tokens, Push):
    # --- decision records ----------------------------------------------------------------------

    @cached_property
    def decision_log(self) -> DecisionLog:
        from phoneid.services.decision_log import DecisionLog

        settings = self.settings
        return DecisionLog(self.decision_store, self.decision_mac, tier=settings.tier, region=settings.region)

    @cached_property
    def decisions(self) -> DecisionBook:
        from phoneid.services.decisions import DecisionBook
        from phoneid.services.page_keys import PageKeys

        page_keys = PageKeys(self.page_key_mac, use="decision-list-page")
        return DecisionBook(
            self.decision_store, self.decision_log, page_keys, self.clock, self.settings.region
        )

    # --- limits ------------------------------------------------------------------------------

    @cached_property
    def rate_limit(self) -> RateLimit:
        from phoneid.services.ratelimit import RateLimit

        return RateLimit(self.rate_limiter, self.clock)

    @cached_property
    def auth_throttle(self) -> AuthThrottle:
        from phoneid.services.ratelimit import AuthThrottle

        return AuthThrottle(self.rate_limiter, self.clock)

    @cached_property
    def budget(self) -> SendBudget:
        from phoneid.services.budget import SendBudget

        return SendBudget(
            self.rate_limiter,
            self.clock,
            per_number=self.settings.sms_per_number_per_hour,
            per_client=self.settings.sms_per_client_per_hour,
        )

    # --- sessions and possession ---------------------------------------------------------------

    @cached_property
    def steps(self) -> SessionSteps:
        from phoneid.services.sessions import SessionSteps

        return SessionSteps(self.sessions, self.clock)

    @cached_property
    def stack(self) -> Stack:
        from phoneid.services.staged import Stack

        return Stack(self.settings.tier, self.settings.region)

    @cached_property
    def method_offer(self) -> MethodOffer:
        from phoneid.domain.offer import MethodOffer

        runs = self.catalogue is not None or self.settings.mobile_auth_configured
        return MethodOffer(self.catalogue, runs, self.settings.region)

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

    # --- the staged flow, Unify and device keys ------------------------------------------------

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
            decisions=self.decision_log,
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
            decisions=self.decision_log,
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

    # --- verification and Identity Manager -----------------------------------------------------

    @cached_property
    def identity_manager(self) -> IdentityManager:
        from phoneid.services.identity_manager import IdentityManager

        return IdentityManager(
            store=self.enrollment_store,
            clock=self.clock,
            region=self.settings.region,
            page_mac=self.page_key_mac,
            push=self.push_subscriptions,
        )

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
            decisions=self.decision_log,
            clock=self.clock,
        )
