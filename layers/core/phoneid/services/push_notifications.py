"""The operator's notifications (``POST /operator/v1/notifications``): verified, de-duplicated, and
turned into the monitor's change events.

1. The bearer token is the one the stack gave the subscription: found by its selector, its verifier
   compared (as a hash) in constant time. Missing, unknown or wrong: 401 (8002), one message for all.
2. The body is a CloudEvents 1.0 object naming the subscription: else 400 (8001).
3. A subscription that has ended (deleted at disenrollment or deactivation, renewed, ended by the
   operator) or that is not the token's: 410 (8011), CAMARA's way to tell the operator to stop.
4. A notification is taken once per (token, ``source``, ``id``), for seven days: a repeat answers
   204 and changes nothing. One that fails is released, so the operator's retry is taken.
5. A subscription-ended event ends the subscription here (the monitor polls the signal again and its
   next pass subscribes anew); a subscribed event is a transition compared by the monitor's rules,
   and each change is logged, queued for the client's webhook and saved as the monitor's state.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from aws_lambda_powertools import Logger

from phoneid.api import jsonbody
from phoneid.domain.errors import SubscriptionGone, Unauthorized
from phoneid.domain.monitor import MonitorState, change_events, compare, needs_baseline
from phoneid.domain.phone import mask
from phoneid.domain.push import (
    KEEP,
    CloudEvent,
    PushSubscription,
    parse_cloud_event,
    split_bearer,
    transition,
    verifier_matches,
)
from phoneid.ports import (
    ChangeEventLog,
    ClientStore,
    Clock,
    EnrollmentStore,
    MonitorStateStore,
    PushSubscriptionStore,
    WebhookQueue,
)

logger = Logger(child=True)

_UNAUTHORIZED = "Unauthorized: the notification's bearer token is not one this stack gave"


class PushNotifications:
    def __init__(
        self,
        *,
        store: PushSubscriptionStore,
        enrollments: EnrollmentStore,
        states: MonitorStateStore,
        change_events: ChangeEventLog,
        queue: WebhookQueue,
        clients: ClientStore,
        clock: Clock,
    ) -> None:
        self._store = store
        self._enrollments = enrollments
        self._states = states
        self._change_events = change_events
        self._queue = queue
        self._clients = clients
        self._clock = clock

    def receive(self, authorization: str | None, body: str | None) -> None:
        subscription = self._verified(authorization)
        # Read as every request body is: depth bounded, each field once (8001 otherwise).
        event = parse_cloud_event(jsonbody.parse(body or ""))
        where = {"subscriptionId": subscription.subscription_id, "signal": subscription.signal.value}
        if subscription.ended or event.subscription_id != subscription.subscription_id:
            logger.info("push notification for an ended subscription", extra=where)
            raise SubscriptionGone()
        key = hashlib.sha256(f"{subscription.selector}\n{event.source}\n{event.id}".encode()).hexdigest()
        if not self._store.claim_event(key, self._clock.now()):
            logger.info("push notification repeated", extra={**where, "cloudEventId": event.id})
            return
        try:
            self._apply(subscription, event)
        except Exception:
            self._store.release_event(key)  # the operator's retry is taken
            raise

    def _verified(self, authorization: str | None) -> PushSubscription:
        token = split_bearer(authorization)
        subscription = self._store.by_selector(token.selector) if token else None
        if token is None or subscription is None or not verifier_matches(token, subscription.verifier_hash):
            raise Unauthorized(_UNAUTHORIZED)
        return subscription

    def _apply(self, subscription: PushSubscription, event: CloudEvent) -> None:
        now = self._clock.now()
        where = {
            "serviceId": subscription.service_id,
            "signal": subscription.signal.value,
            "type": event.type,
        }
        if event.ended:
            self._store.end(subscription, now)
            logger.info("push subscription ended by the operator", extra=where)
            return
        step = transition(subscription.signal, event)
        enrollment = self._enrollments.get(subscription.client_id, subscription.service_id, with_pii=False)
        if step is None or enrollment is None or not enrollment.active:
            logger.info("push notification ignored", extra=where)
            return
        fact, value, before = step
        state = self._states.monitor_state(enrollment.client_id, enrollment.service_id)
        facts = dict(state.facts) if state and not needs_baseline(state, enrollment.updated_at) else {}
        if before is not KEEP:
            facts[fact.value] = before
        else:
            facts.setdefault(fact.value, None)  # no change known yet: any change is new
        changes, saved = compare(
            MonitorState(facts=facts), {fact: value}, now=now, home_country=enrollment.country
        )
        found = change_events(enrollment, changes)
        if found:
            self._change_events.append(found)
            client = self._clients.get(enrollment.client_id)
            if client and client.webhook and client.enabled:
                for change_event in found:
                    self._queue.send(change_event)
        # The pass that checked the identity stays recorded: a page of it read again skips it.
        saved = replace(saved, pass_id=state.pass_id if state else None)
        self._states.save_monitor_state(enrollment.client_id, enrollment.service_id, saved)
        for change_event in found:
            logger.info(
                "change event",
                extra={
                    **where,
                    "phone": mask(enrollment.phone_number),
                    "eventId": change_event.event_id,
                    "eventType": change_event.kind.value,
                    "pushed": True,
                },
            )
