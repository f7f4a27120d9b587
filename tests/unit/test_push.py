"""Push before poll in memory: CloudEvents read as the monitor's facts, the sink token, and the
notifications service (verification, de-duplication on a fake clock, the change events it makes)
and the subscriptions' lifecycle with an operator that fails."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from phoneid.domain.enrollment import Action, Enrollment, new_service_id
from phoneid.domain.errors import MalformedRequest, SubscriptionGone, Unauthorized
from phoneid.domain.monitor import Fact, MonitorState
from phoneid.domain.push import (
    KEEP,
    SUBSCRIBED_TYPE,
    PushSignal,
    PushSubscription,
    new_sink_token,
    offered,
    parse_cloud_event,
    split_bearer,
    transition,
    verifier_matches,
)
from phoneid.domain.signals import ChangeKind, SignalSourceError
from phoneid.services.clients import ClientAdmin
from phoneid.services.push import PushSubscriptions
from phoneid.services.push_notifications import PushNotifications
from tests.fakes import (
    START,
    ContextCipher,
    FakeClock,
    InMemoryChangeEventLog,
    InMemoryClientStore,
    InMemoryEnrollmentStore,
    InMemoryMonitorStates,
    InMemoryPushSubscriptions,
    InMemoryWebhookQueue,
)

PHONE = "+12025550177"


def cloud_event(kind: str, subscription_id: str = "sub-1", **fields: Any) -> dict[str, Any]:
    return {
        "id": fields.pop("id", "n-1"),
        "source": "https://operator.example/notifications",
        "type": kind,
        "specversion": "1.0",
        "datacontenttype": "application/json",
        "data": {"subscriptionId": subscription_id, **fields.pop("data", {})},
        "time": fields.pop("time", "2026-11-22T11:40:00Z"),
        **fields,
    }


# --- the events ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("signal", "data", "expected"),
    [
        (PushSignal.SIM_SWAP, {}, (Fact.SIM_CHANGE, "2026-11-22T11:40:00+00:00", KEEP)),
        (PushSignal.REACHABILITY, {}, (Fact.REACHABLE, False, True)),
        (PushSignal.ROAMING, {"countryName": ["es"]}, (Fact.ROAMING, "ES", None)),
        (PushSignal.ROAMING, {}, (Fact.ROAMING, "ZZ", None)),
    ],
)
def test_each_subscribed_event_is_a_transition_of_one_fact(
    signal: PushSignal, data: dict[str, Any], expected: tuple[Fact, Any, Any]
) -> None:
    event = parse_cloud_event(cloud_event(SUBSCRIBED_TYPE[signal], data=data))
    assert transition(signal, event) == expected
    assert not event.ended


def test_an_event_of_another_type_changes_nothing_and_the_ended_types_end() -> None:
    reconnected = "org.camaraproject.device-reachability-status-subscriptions.v0.reachability-data"
    assert transition(PushSignal.REACHABILITY, parse_cloud_event(cloud_event(reconnected))) is None
    for ended in (
        "org.camaraproject.sim-swap-subscriptions.v0.subscription-ended",
        "org.camaraproject.device-roaming-status-subscriptions.v0.subscription-ends",
    ):
        assert parse_cloud_event(cloud_event(ended)).ended


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"specversion": "0.3"}, "specversion must be 1.0"),
        ({"id": ""}, "id must be a non-empty string"),
        ({"source": 7}, "source must be a non-empty string"),
        ({"type": "x" * 257}, "type must be a non-empty string"),
        ({"data": None}, "data.subscriptionId is required"),
        ({"time": "2026-11-22T11:40:00"}, "time must have a time zone"),
        ({"time": "soon"}, "time must be an RFC 3339 date-time"),
    ],
)
def test_a_cloud_event_without_what_camara_requires_is_refused_naming_it(
    change: dict[str, Any], reason: str
) -> None:
    with pytest.raises(MalformedRequest) as refused:
        parse_cloud_event({**cloud_event(SUBSCRIBED_TYPE[PushSignal.SIM_SWAP]), **change})
    assert refused.value.message == f"Malformed request: {reason}"


def test_the_sink_token_is_a_selector_and_a_verifier_kept_only_as_its_hash() -> None:
    token = new_sink_token()
    sent = split_bearer(f"Bearer {token.bearer}")
    assert sent == token
    assert token.verifier not in token.verifier_hash
    assert verifier_matches(sent, token.verifier_hash)
    longer = split_bearer(f"Bearer {token.selector}.{token.verifier}x")
    assert longer is not None
    assert not verifier_matches(longer, token.verifier_hash)
    for header in (
        None,
        "",
        token.bearer,
        "Basic abc",
        "Bearer nodot",
        "Bearer .verifier",
        "Bearer selector.",
    ):
        assert split_bearer(header) is None, header


def test_the_offered_signals_refuse_a_name_they_do_not_know() -> None:
    assert offered(" sim-swap, roaming ") == {PushSignal.SIM_SWAP, PushSignal.ROAMING}
    assert offered("") == frozenset()
    with pytest.raises(ValueError, match="sim_swap"):
        offered("sim_swap")


# --- the notifications -------------------------------------------------------------------------------


class FailingOnce(InMemoryWebhookQueue):
    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    def send(self, event: Any) -> None:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("queue unavailable")
        super().send(event)


class World:
    def __init__(self) -> None:
        self.clock = FakeClock()
        self.enrollments = InMemoryEnrollmentStore()
        self.states = InMemoryMonitorStates(self.enrollments)
        self.log = InMemoryChangeEventLog()
        self.queue: InMemoryWebhookQueue = InMemoryWebhookQueue()
        self.clients = InMemoryClientStore()
        self.store = InMemoryPushSubscriptions()
        admin = ClientAdmin(self.clients, self.clock, "production", "US", cipher=ContextCipher())
        self.client_id = admin.create().client.client_id
        admin.set_webhook(self.client_id, "https://hooks.example.com/phoneid")
        self.identity = Enrollment(
            client_id=self.client_id,
            service_id=new_service_id(),
            phone_number=PHONE,
            country="US",
            created_at=START - timedelta(days=30),
        )
        self.enrollments.enroll(self.identity)
        self.tokens: dict[PushSignal, str] = {}
        for signal in PushSignal:
            token = new_sink_token()
            self.tokens[signal] = token.bearer
            self.store.put(
                PushSubscription(
                    self.client_id,
                    self.identity.service_id,
                    signal,
                    token.selector,
                    token.verifier_hash,
                    f"sub-{signal.value}",
                    START + timedelta(days=30),
                )
            )

    def service(self) -> PushNotifications:
        return PushNotifications(
            store=self.store,
            enrollments=self.enrollments,
            states=self.states,
            change_events=self.log,
            queue=self.queue,
            clients=self.clients,
            clock=self.clock,
        )

    def receive(
        self, signal: PushSignal, event: dict[str, Any] | None = None, token: str | None = None
    ) -> None:
        sent = event or cloud_event(SUBSCRIBED_TYPE[signal], f"sub-{signal.value}")
        self.service().receive(f"Bearer {token or self.tokens[signal]}", json.dumps(sent))


def test_a_pushed_sim_swap_is_one_change_event_queued_logged_and_saved_as_the_monitors_state() -> None:
    world = World()
    world.receive(PushSignal.SIM_SWAP)

    (event,) = world.queue.sent
    assert (event.kind, event.service_id, event.phone_number) == (
        ChangeKind.SIM_SWAP,
        world.identity.service_id,
        PHONE,
    )
    assert event.occurred_at == datetime.fromisoformat("2026-11-22T11:40:00+00:00")
    assert list(world.log.events.values()) == [event]
    saved = world.states.monitor_state(world.client_id, world.identity.service_id)
    assert saved == MonitorState(facts={"simChange": "2026-11-22T11:40:00+00:00"}, checked_at=START)


def test_a_sim_swap_the_monitor_already_saw_is_not_sent_again() -> None:
    world = World()
    seen = MonitorState(facts={"simChange": "2026-11-22T11:40:00+00:00"}, checked_at=START)
    world.states.save_monitor_state(world.client_id, world.identity.service_id, seen)
    world.receive(PushSignal.SIM_SWAP)
    assert world.queue.sent == []


def test_a_notification_keeps_the_pass_that_checked_the_identity() -> None:
    # Given an identity the monitor's pass "p1" checked
    world = World()
    seen = MonitorState(facts={"reachable": True}, checked_at=START, pass_id="p1")
    world.states.save_monitor_state(world.client_id, world.identity.service_id, seen)

    # When the operator pushes a change of it
    world.receive(PushSignal.SIM_SWAP)

    # Then its state still says "p1" checked it: the pass, resumed, does not check it again
    saved = world.states.monitor_state(world.client_id, world.identity.service_id)
    assert saved is not None
    assert saved.pass_id == "p1"


def test_disconnect_and_roaming_abroad_are_changes_whatever_the_monitor_saw_before() -> None:
    world = World()
    world.states.save_monitor_state(
        world.client_id,
        world.identity.service_id,
        MonitorState(facts={"reachable": False, "roaming": "FR"}, checked_at=START),
    )
    world.receive(PushSignal.REACHABILITY)
    world.receive(PushSignal.ROAMING)
    assert [e.kind for e in world.queue.sent] == [ChangeKind.DISCONNECT, ChangeKind.MOVED_OUT_OF_COVERAGE]


def test_a_repeat_is_taken_once_until_its_record_expires_seven_days_later() -> None:
    world = World()
    world.receive(PushSignal.REACHABILITY)
    world.clock.advance(days=6, hours=23)
    world.receive(PushSignal.REACHABILITY)
    assert len(world.queue.sent) == 1

    world.clock.advance(hours=1, seconds=1)
    world.receive(PushSignal.REACHABILITY)
    assert len(world.queue.sent) == 2


def test_a_notification_that_fails_is_released_so_the_operators_retry_is_taken() -> None:
    world = World()
    world.queue = FailingOnce()
    with pytest.raises(RuntimeError):
        world.receive(PushSignal.REACHABILITY)
    world.receive(PushSignal.REACHABILITY)
    assert [e.kind for e in world.queue.sent] == [ChangeKind.DISCONNECT]


def test_another_subscriptions_token_or_a_wrong_verifier_is_unauthorized_and_an_ended_one_gone() -> None:
    world = World()
    sim_swap = cloud_event(SUBSCRIBED_TYPE[PushSignal.SIM_SWAP], "sub-sim-swap")
    right = world.tokens[PushSignal.SIM_SWAP]
    wrong = right[:-1] + ("B" if right.endswith("A") else "A")
    with pytest.raises(Unauthorized):
        world.receive(PushSignal.SIM_SWAP, sim_swap, token=wrong)
    with pytest.raises(SubscriptionGone):  # the roaming token, for the SIM swap subscription
        world.receive(PushSignal.SIM_SWAP, sim_swap, token=world.tokens[PushSignal.ROAMING])
    ended = cloud_event("org.camaraproject.sim-swap-subscriptions.v0.subscription-ended", "sub-sim-swap")
    world.receive(PushSignal.SIM_SWAP, ended)
    assert {s.signal for s in world.store.for_identity(world.client_id, world.identity.service_id)} == {
        PushSignal.REACHABILITY,
        PushSignal.ROAMING,
    }
    with pytest.raises(SubscriptionGone):
        world.receive(PushSignal.SIM_SWAP, {**sim_swap, "id": "n-2"})
    assert world.queue.sent == []


def test_a_notification_for_an_inactive_identity_is_taken_and_changes_nothing() -> None:
    world = World()
    world.enrollments.apply(world.client_id, world.identity.service_id, Action.DEACTIVATE, START)
    world.receive(PushSignal.REACHABILITY)
    assert world.queue.sent == []
    assert world.states.monitor_state(world.client_id, world.identity.service_id) is None


# --- the subscriptions ---------------------------------------------------------------------------------


class Operator:
    """Subscriptions by id; ``failures`` calls fail first (a SignalSourceError, as the adapter raises)."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.made: dict[str, tuple[PushSignal, str]] = {}  # id -> (signal, token)

    def create(
        self, signal: PushSignal, phone_number: str, *, sink: str, token: str, expires_at: datetime
    ) -> tuple[str, datetime | None]:
        if self.failures:
            self.failures -= 1
            raise SignalSourceError("CAMARA SIM Swap Subscriptions: HTTP 503")
        identifier = f"sub-{len(self.made)}"
        self.made[identifier] = (signal, token)
        return identifier, None

    def delete(self, signal: PushSignal, subscription_id: str) -> None:
        self.made.pop(subscription_id)


def test_an_operator_failing_at_enrollment_leaves_the_signal_polled_until_a_pass_subscribes() -> None:
    world = World()
    world.store = InMemoryPushSubscriptions()
    operator = Operator(failures=1)
    push = PushSubscriptions(
        store=world.store,
        operator=operator,
        signals=frozenset({PushSignal.SIM_SWAP}),
        base_url="https://api.example.com/",
        clock=world.clock,
    )

    push.subscribe(world.identity)  # the operator fails: no exception, nothing stored
    assert world.store.for_identity(world.client_id, world.identity.service_id) == []

    assert push.ensure(world.identity) == frozenset()  # the pass polls it, and subscribes
    assert push.ensure(world.identity) == {PushSignal.SIM_SWAP}  # the next pass skips it
    (subscription,) = world.store.for_identity(world.client_id, world.identity.service_id)
    assert subscription.expires_at == START + timedelta(days=30)  # as long as its token
    (_, token) = operator.made[subscription.subscription_id]
    assert token.partition(".")[2] not in json.dumps(subscription.__dict__, default=str)

    push.unsubscribe(world.client_id, world.identity.service_id)
    assert operator.made == {}
    ended = world.store.by_selector(subscription.selector)
    assert ended is not None
    assert ended.ended


def test_a_subscription_that_expired_unrenewed_is_replaced_and_its_token_void() -> None:
    world = World()
    operator = Operator()
    push = PushSubscriptions(
        store=world.store,
        operator=operator,
        signals=frozenset({PushSignal.SIM_SWAP}),
        base_url="https://api.example.com",
        clock=world.clock,
    )
    (old,) = [
        s
        for s in world.store.for_identity(world.client_id, world.identity.service_id)
        if s.signal == "sim-swap"
    ]

    world.clock.advance(days=31)  # no pass renewed it
    assert push.ensure(world.identity) == frozenset()

    (new,) = [
        s
        for s in world.store.for_identity(world.client_id, world.identity.service_id)
        if s.signal == "sim-swap"
    ]
    assert new.selector != old.selector
    ended = world.store.by_selector(old.selector)
    assert ended is not None
    assert ended.ended
