"""The console put together for a running stack: its feed on the template's routes and the stack's
clock, its panels on the stack's outbox, Connect batches and webhook queue poller, and its decisions
on the stack's clients and decision records."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoneid.bootstrap import container
from phoneid.domain.connect import Batch, BatchState
from phoneid.domain.connect.names import result_key
from phoneid.domain.webhooks import loggable_url
from phoneid_dev.console_page.decisions import ConsoleDecisions
from phoneid_dev.console_page.feed import ConsoleFeed
from phoneid_dev.console_page.panels import WebhookAttempts
from phoneid_dev.console_page.routes import ConsoleSources

if TYPE_CHECKING:  # the type only: the stack imports nothing of the console
    from phoneid_dev.devstack import DevStack

WEBHOOK_FUNCTION = "WebhookDeliveryFunction"


def console_of(dev: DevStack) -> ConsoleSources:
    """The console of ``dev``; it watches the webhook queue's poller from now on."""
    feed = ConsoleFeed(dev.stack.template.routes, _known_client, dev.clock.now)
    webhooks = WebhookAttempts(WEBHOOK_FUNCTION, _webhook_endpoint, dev.clock.now)
    for poller in dev.queue_pollers:
        poller.observers.append(webhooks.seen)
    decisions = ConsoleDecisions(
        lambda: container().clients,
        lambda: container().decisions,
        lambda: {credentials["client_id"]: role for role, credentials in dev.own_clients.kept.items()},
    )
    return ConsoleSources(feed, dev.outbox.messages, _recent_batches, _chunks_done, webhooks, decisions)


def _known_client(client_id: str) -> bool:
    """Whether the stack has this client; when the store cannot say, it is not shown."""
    try:
        return container().clients.get(client_id) is not None
    except Exception:  # the request is answered whatever the console can read
        return False


def _webhook_endpoint(client_id: str) -> str | None:
    client = container().clients.get(client_id)
    return loggable_url(client.webhook.url) if client is not None and client.webhook is not None else None


def _recent_batches() -> list[Batch]:
    return container().batch_states.list_recent(limit=20)


def _chunks_done(batch: Batch) -> int:
    """A verifying batch's chunks with results (the others show no progress between states)."""
    if batch.state is not BatchState.VERIFYING:
        return 0
    objects = container().objects
    return sum(1 for n in range(batch.chunks) if objects.exists(result_key(batch.batch_id, n)))
