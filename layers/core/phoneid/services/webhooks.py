"""Delivering queued change events to the clients' webhooks, signed, at least once.

One queue message is one event and one POST. A 2xx answer delivers it; any other answer, no answer
within the timeout, or a failure of ours makes it a failed item: its message stays hidden for the
backoff (``phoneid.domain.webhooks.retry_delay``) and SQS offers it again; after the queue's
``maxReceiveCount`` receives SQS moves it to the dead-letter queue. Every retry carries the same
event id, so a receiver de-duplicates on ``PhoneID-Event-Id``.

A delivery PhoneID refuses to make (the URL breaks a rule, or its host resolves to a private,
loopback, metadata or other non-public address: ``phoneid.adapters.webhook_http``) is a failed
attempt like the others, retried on the same schedule and dead-lettered in the end: a name's
addresses can change, and the dead-letter queue is where the operator sees that a client's webhook
points somewhere PhoneID does not deliver. The log says which rule refused it; no connection is made.

A client without a webhook (removed after the event was queued) or a disabled client gets nothing:
the message is dropped. Logs name the event, the client, the receiver's host and path and a masked
number; never the secret, the URL's query string or the number.
"""

from __future__ import annotations

from enum import StrEnum

from aws_lambda_powertools import Logger

from phoneid.domain.phone import mask
from phoneid.domain.webhooks import (
    MalformedMessage,
    WebhookRefused,
    WebhookUnreachable,
    delivery_body,
    delivery_headers,
    from_message,
    loggable_url,
    retry_delay,
    secret_context,
)
from phoneid.ports import ClientStore, Clock, PiiCipher, WebhookQueue, WebhookSender

logger = Logger(child=True)


class Outcome(StrEnum):
    DELIVERED = "delivered"
    DROPPED = "dropped"  # the client has no webhook (any more) or is disabled


class DeliveryFailed(Exception):
    """The event was not delivered this time; SQS offers it again after its backoff.

    The message names the kind of failure only (a status, an exception type).
    """


class WebhookDelivery:
    def __init__(
        self,
        *,
        clients: ClientStore,
        cipher: PiiCipher,
        sender: WebhookSender,
        queue: WebhookQueue,
        clock: Clock,
    ) -> None:
        self._clients = clients
        self._cipher = cipher
        self._sender = sender
        self._queue = queue
        self._clock = clock

    def deliver(self, message: str, *, receipt: str, receive_count: int) -> Outcome:
        """Deliver one queued event; raises ``DeliveryFailed`` after scheduling its retry."""
        try:
            event = from_message(message)
        except MalformedMessage:
            logger.error("webhook message malformed", extra={"receiveCount": receive_count})
            self._retry_later(receipt, receive_count, {})
            raise DeliveryFailed("malformed message") from None
        where: dict[str, object] = {
            "eventId": event.event_id,
            "eventType": event.kind.value,
            "clientId": event.client_id,
            "phone": mask(event.phone_number),
            "receiveCount": receive_count,
        }
        try:
            client = self._clients.get(event.client_id)
            webhook = client.webhook if client is not None and client.enabled else None
            if webhook is None:
                logger.info("change event not delivered: no webhook", extra=where)
                return Outcome.DROPPED
            where["receiver"] = loggable_url(webhook.url)
            secret = self._cipher.decrypt(webhook.secret_sealed, secret_context(event.client_id)).decode()
            now = self._clock.now()
            body = delivery_body(event, now)
            status = self._sender.post(
                webhook.url, body, delivery_headers(event, secret, body, int(now.timestamp()))
            )
        except WebhookRefused as error:
            failure = f"refused: {error}"
        except WebhookUnreachable as error:
            failure = f"unreachable: {error}"
        except Exception as error:  # our own failure (KMS, DynamoDB): retried like the receiver's
            failure = f"internal: {type(error).__name__}"
        else:
            if 200 <= status < 300:
                logger.info("change event delivered", extra={**where, "status": status})
                return Outcome.DELIVERED
            failure = f"receiver answered {status}"
        self._retry_later(receipt, receive_count, where)
        logger.warning("change event delivery failed", extra={**where, "failure": failure})
        raise DeliveryFailed(failure)

    def _retry_later(self, receipt: str, receive_count: int, where: dict[str, object]) -> None:
        delay = retry_delay(receive_count)
        where["retryInSeconds"] = delay
        try:
            self._queue.retry_later(receipt, delay)
        except Exception as error:  # the queue's own visibility timeout applies instead
            logger.warning("webhook retry not scheduled", extra={**where, "error_type": type(error).__name__})
