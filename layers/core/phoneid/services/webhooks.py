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

A batch's deliveries run side by side (``deliver_batch``), each in a thread of its own, and each
POST has one deadline from connecting to the answer's last byte (``DELIVERY_DEADLINE_SECONDS``): a
slow receiver holds its own client's deliveries up to that deadline, never another client's, and
never the batch past the function's timeout. A delivery starts only while the function has the time
to finish it; one it has no time for is failed without a POST and offered again at once, so no
event is delivered twice because a batch was cut off (Lambda would give every message of a timed
out batch back to SQS, the delivered ones too).

A client without a webhook (removed after the event was queued) or a disabled client gets nothing:
the message is dropped. Logs name the event, the client, the receiver's host and path and a masked
number; never the secret, the URL's query string or the number.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Final

from aws_lambda_powertools import Logger

from phoneid.domain.phone import mask
from phoneid.domain.webhooks import (
    DELIVERY_DEADLINE_SECONDS,
    MalformedMessage,
    QueuedEvent,
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
from phoneid.services.pools import submit_in_context

logger = Logger(child=True)

# A batch is at most 10 messages (the event source's BatchSize): each gets a thread.
MAX_PARALLEL_DELIVERIES: Final = 10
# The most one delivery takes: the client's record and its secret (two AWS calls of at most 9 s each,
# ADR 0054), the name's lookup, the POST's deadline, and the retry's visibility change (9 s).
TIME_TO_DELIVER_SECONDS: Final = 2 * 9 + 3 + DELIVERY_DEADLINE_SECONDS + 9


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

    def deliver_batch(self, messages: Sequence[QueuedEvent], *, time_left: Callable[[], float]) -> list[str]:
        """Deliver a batch side by side; the ids of the messages that failed (SQS offers them again).

        ``time_left``: seconds left of the function's invocation. A delivery that could not finish in
        it is not started."""
        if not messages:
            return []
        workers = min(MAX_PARALLEL_DELIVERIES, len(messages))
        with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="webhook") as pool:
            attempts = [
                submit_in_context(pool, self._deliver_in_time, message, time_left) for message in messages
            ]
            return [
                message.message_id
                for message, done in zip(messages, attempts, strict=True)
                if not done.result()
            ]

    def _deliver_in_time(self, message: QueuedEvent, time_left: Callable[[], float]) -> bool:
        """Whether the message is done with (delivered or dropped)."""
        if time_left() < TIME_TO_DELIVER_SECONDS:
            logger.warning(
                "change event not attempted: the invocation's time is short",
                extra={"receiveCount": message.receive_count},
            )
            try:
                self._queue.retry_later(message.receipt, 0)
            except Exception as error:  # the queue's own visibility timeout applies instead
                logger.warning("webhook retry not scheduled", extra={"error_type": type(error).__name__})
            return False
        try:
            self.deliver(message.body, receipt=message.receipt, receive_count=message.receive_count)
        except DeliveryFailed:
            return False
        except Exception as error:  # deliver fails its own way; this is a bug's last net
            logger.error("change event delivery broke", extra={"error_type": type(error).__name__})
            return False
        return True

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
