"""Change-event webhooks: the monitor that finds changes on enrolled numbers, the queue of events and
their delivery to the clients' receivers."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.wiring.push import Push

if TYPE_CHECKING:
    from phoneid.ports import WebhookSender
    from phoneid.services.monitor import ChangeMonitor
    from phoneid.services.monitor_passes import MonitorPasses
    from phoneid.services.webhooks import WebhookDelivery


class Webhooks(Push):
    @cached_property
    def webhook_sender(self) -> WebhookSender:
        """Loopback receivers only on the local stack (its setting); every other stack delivers to
        public addresses only."""
        from phoneid.adapters.webhook_http import HttpWebhookSender, SystemResolver

        return HttpWebhookSender(resolver=SystemResolver(), allow_loopback=self.settings.local_stack)

    @cached_property
    def monitor(self) -> ChangeMonitor:
        """Sandbox stacks have no carrier ports: the monitor asks the lists and the numbering plan."""
        from phoneid.services.monitor import ChangeMonitor, MonitorSources

        return ChangeMonitor(
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
            push=self.push_subscriptions,
        )

    @cached_property
    def monitor_passes(self) -> MonitorPasses:
        """The monitor's pass as a workflow: plan, segments, totals (statemachines/monitor.asl.json)."""
        from phoneid.adapters.dynamodb.monitor_passes import DynamoMonitorPasses
        from phoneid.services.monitor_passes import MonitorPasses

        return MonitorPasses(
            monitor=self.monitor,
            enrollments=self.enrollment_store,
            passes=DynamoMonitorPasses(self.dynamodb, self.settings.monitor_passes_table),
            clock=self.clock,
            max_segments=self.settings.monitor_max_segments,
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
