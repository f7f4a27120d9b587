"""Push before poll: the identities' CAMARA subscriptions and the operator's notifications."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.carrier import Carrier
from phoneid.wiring.stores import Stores

if TYPE_CHECKING:
    from phoneid.ports import PushSubscriptionStore, WebhookQueue
    from phoneid.services.push import PushSubscriptions
    from phoneid.services.push_notifications import PushNotifications


class Push(Stores, Carrier):
    @cached_property
    def push_store(self) -> PushSubscriptionStore:
        from phoneid.adapters.dynamodb.push_subscriptions import DynamoPushSubscriptions

        return DynamoPushSubscriptions(self.dynamodb, self.settings.push_subscriptions_table)

    @cached_property
    def push_subscriptions(self) -> PushSubscriptions | None:
        """None unless the operator offers subscriptions (and the stack has a public base URL)."""
        from phoneid.adapters.camara_subscriptions import CamaraSubscriptions
        from phoneid.domain.push import offered
        from phoneid.services.push import PushSubscriptions

        if self.camara_network is None or not self.settings.push_configured:
            return None
        return PushSubscriptions(
            store=self.push_store,
            operator=CamaraSubscriptions(self.camara_network),
            signals=offered(self.settings.camara_subscriptions),
            base_url=self.settings.public_base_url,
            clock=self.clock,
        )

    @cached_property
    def webhook_queue(self) -> WebhookQueue:
        from phoneid.adapters.sqs import SqsWebhookQueue

        return SqsWebhookQueue(self.sqs, self.settings.webhook_queue_url)

    @cached_property
    def push_notifications(self) -> PushNotifications:
        from phoneid.services.push_notifications import PushNotifications

        return PushNotifications(
            store=self.push_store,
            enrollments=self.enrollment_store,
            states=self.monitor_states,
            change_events=self.change_events,
            queue=self.webhook_queue,
            clients=self.clients,
            clock=self.clock,
        )
