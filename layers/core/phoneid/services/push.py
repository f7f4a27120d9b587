"""Push before poll: each active identity's CAMARA subscriptions at the operator.

An identity gets one subscription per signal the operator offers (setting ``CAMARA_SUBSCRIPTIONS``)
when it is enrolled through ``POST /v3/identity`` or activated; identities enrolled in bulk (batch,
verify, Connect) get theirs from the monitor's next pass, which also renews a subscription that
expires within ``RENEW_WITHIN`` and makes again one the operator ended. Deactivation and
disenrollment delete them. Every subscription has its own sink token (``phoneid.domain.push``), kept
as a hash.

A failure at the operator never fails the enrollment or the pass: the signal is polled until a
subscription is live, and the next pass tries again.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from aws_lambda_powertools import Logger

from phoneid.domain.enrollment import Enrollment
from phoneid.domain.phone import mask
from phoneid.domain.push import PushSignal, PushSubscription, new_sink_token
from phoneid.ports import Clock, OperatorSubscriptions, PushSubscriptionStore

logger = Logger(child=True)

# What the stack asks for (the sink token lives as long); renewed this long before it ends.
LIFETIME: Final = timedelta(days=30)
RENEW_WITHIN: Final = timedelta(days=3)
SINK_PATH: Final = "/operator/v1/notifications"


class PushSubscriptions:
    def __init__(
        self,
        *,
        store: PushSubscriptionStore,
        operator: OperatorSubscriptions,
        signals: frozenset[PushSignal],
        base_url: str,
        clock: Clock,
    ) -> None:
        self._store = store
        self._operator = operator
        self._signals = signals
        self._sink = f"{base_url.rstrip('/')}{SINK_PATH}"
        self._clock = clock

    def subscribe(self, enrollment: Enrollment) -> None:
        """Every offered signal the identity has no live subscription to (enrollment, activation)."""
        now = self._clock.now()
        current = self._store.for_identity(enrollment.client_id, enrollment.service_id)
        live = {subscription.signal for subscription in current if subscription.live(now)}
        for signal in sorted(self._signals - live):
            self._subscribe(enrollment, signal, now)

    def ensure(self, enrollment: Enrollment) -> frozenset[PushSignal]:
        """The signals pushed for this identity since before this call (the monitor polls the
        others); missing subscriptions are made and those about to expire renewed."""
        now = self._clock.now()
        current = self._store.for_identity(enrollment.client_id, enrollment.service_id)
        live = frozenset(s.signal for s in current if s.live(now) and s.signal in self._signals)
        for signal in sorted(self._signals - live):
            self._subscribe(enrollment, signal, now)
        for subscription in current:
            if not subscription.live(now):  # expired unrenewed, replaced above: its token is void
                self._store.end(subscription, now)
                continue
            expiring = subscription.expires_at is not None and subscription.expires_at - now < RENEW_WITHIN
            if expiring and self._subscribe(enrollment, subscription.signal, now):
                self._delete(subscription, now)
        return live

    def unsubscribe(self, client_id: str, service_id: str) -> None:
        """Every subscription of the identity deleted at the operator and ended here."""
        now = self._clock.now()
        for subscription in self._store.for_identity(client_id, service_id):
            self._delete(subscription, now)

    def _subscribe(self, enrollment: Enrollment, signal: PushSignal, now: datetime) -> bool:
        token = new_sink_token()
        asked = now + LIFETIME
        where = {
            "serviceId": enrollment.service_id,
            "signal": signal.value,
            "phone": mask(enrollment.phone_number),
        }
        try:
            subscription_id, until = self._operator.create(
                signal, enrollment.phone_number, sink=self._sink, token=token.bearer, expires_at=asked
            )
            self._store.put(
                PushSubscription(
                    client_id=enrollment.client_id,
                    service_id=enrollment.service_id,
                    signal=signal,
                    selector=token.selector,
                    verifier_hash=token.verifier_hash,
                    subscription_id=subscription_id,
                    # The token ends at ``asked``: the subscription cannot outlive it.
                    expires_at=min(until, asked) if until else asked,
                )
            )
        except Exception as error:  # polled instead; the next pass tries again
            logger.warning("push subscription failed", extra={**where, "error_type": type(error).__name__})
            return False
        logger.info("push subscription made", extra={**where, "subscriptionId": subscription_id})
        return True

    def _delete(self, subscription: PushSubscription, now: datetime) -> None:
        where = {
            "serviceId": subscription.service_id,
            "signal": subscription.signal.value,
            "subscriptionId": subscription.subscription_id,
        }
        try:
            self._operator.delete(subscription.signal, subscription.subscription_id)
        except Exception as error:  # ended here anyway: its notifications are answered 410
            failed = {**where, "error_type": type(error).__name__}
            logger.warning("push subscription not deleted", extra=failed)
        self._store.end(subscription, now)
        logger.info("push subscription ended", extra=where)
