"""Push before poll on moto: a production stack whose fake operator offers CAMARA subscriptions.

The operator's notifications reach the stack's sink through the gateway emulation, as API Gateway
would serve ``POST /operator/v1/notifications`` to it; the webhook queue is fed to the delivery
handler, and the receiver verifies every signature as docs/webhooks.md tells integrators.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

import pytest

from phoneid.domain.signals import ChangeKind
from phoneid_dev.gateway import HttpResponse
from phoneid_dev.operator import FakeOperator
from phoneid_dev.operator_subscriptions import Subscription
from tests.fakes import FakeClock
from tests.harness import PUBLIC_BASE_URL, Api, LogRecorder
from tests.integration.test_webhooks import Receiver, Setup, Webhooks
from tests.integration.test_webhooks import receiver as receiver  # the fixture

# Each invocation a new instance: the IAM check sees every call each function makes on its own
# (the operator's secret is read once per instance).
pytestmark = pytest.mark.cold_instances

_numbers = itertools.count(6000)
SINK = f"{PUBLIC_BASE_URL}/operator/v1/notifications"
SWAPPED = "org.camaraproject.sim-swap-subscriptions.v0.swapped"


def new_number() -> str:
    return f"+1202555{next(_numbers):04d}"


def notify(api: Api, event: Mapping[str, Any] | str, token: str | None) -> HttpResponse:
    """A notification as the operator POSTs it to the sink."""
    headers = {"Content-Type": "application/cloudevents+json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = event if isinstance(event, str) else json.dumps(event)
    return api.request("POST", "/operator/v1/notifications", body, headers)


def stack(
    make_api: Callable[..., Api], operator: FakeOperator, url: str, state: Receiver, pushed: str
) -> Setup:
    api = make_api(tier="production", operator=operator, parameters={"CamaraSubscriptions": pushed})

    def sink(target: str, headers: Mapping[str, str], body: bytes) -> int:
        assert target == SINK
        return notify(api, body.decode(), dict(headers)["Authorization"].removeprefix("Bearer ")).status

    operator.subscriptions.send = sink
    integrator = api.integrator()
    state.secret = api.container.client_admin.set_webhook(integrator.client_id, url).secret
    return Setup(api, Webhooks(api), integrator, state, url)


@pytest.fixture
def push(make_api: Callable[..., Api], operator: FakeOperator, receiver: tuple[Receiver, str]) -> Setup:
    state, url = receiver
    return stack(make_api, operator, url, state, "sim-swap,reachability,roaming")


def disenroll(setup: Setup, service_id: str) -> None:
    answer = setup.api.call("DELETE", f"/v3/identity/{service_id}", token=setup.integrator.access_token)
    assert answer.status == 200, answer.body


def subscriptions_of(operator: FakeOperator, phone: str) -> dict[str, Subscription]:
    return {s.api: s for s in operator.subscriptions.active() if s.phone_number == phone}


def test_an_enrolled_number_is_subscribed_and_a_pushed_sim_swap_reaches_the_webhook_signed(
    push: Setup, operator: FakeOperator, clock: FakeClock
) -> None:
    # Given an identity enrolled through the API
    phone = new_number()
    service_id = push.enroll(phone, clientCustomerId="customer-7")

    # Then the operator holds one subscription per signal, each with the stack's sink and its own token
    subscriptions = subscriptions_of(operator, phone)
    assert set(subscriptions) == {"sim-swap", "reachability", "roaming"}
    assert {s.sink for s in subscriptions.values()} == {SINK}
    assert len({s.token for s in subscriptions.values()}) == 3
    stored = json.dumps(push.api.table_items("PushSubscriptionsTable"))
    assert phone not in stored
    assert phone[1:] not in stored
    verifiers = [s.token.partition(".")[2] for s in subscriptions.values()]
    assert all(verifier not in stored for verifier in verifiers)

    # When the operator sees a SIM swap (no monitor pass runs) and the queue is delivered
    swapped = clock.now() - timedelta(minutes=3)
    operator.script(phone, latestSimChange=swapped)
    delivered = push.webhooks.deliver()

    # Then the sink took the notification and the receiver got one signed SIM_SWAP of that time
    assert [sent["status"] for sent in operator.subscriptions.sent] == [204]
    assert delivered == (1, 0)
    assert push.receiver.rejected == 0
    (event,) = push.receiver.events.values()
    assert event == {
        "eventId": event["eventId"],
        "eventType": "SIM_SWAP",
        "description": "The number's SIM card changed.",
        "phoneNumber": phone,
        "serviceId": service_id,
        "clientCustomerId": "customer-7",
        "occurredAt": swapped.isoformat().replace("+00:00", "Z"),
        "sentAt": clock.now().isoformat().replace("+00:00", "Z"),
    }
    # And the fraud policy's change-event log holds it, as for a polled change
    logged = push.api.container.change_events.since(push.integrator.client_id, phone, swapped)
    assert [e.kind for e in logged] == [ChangeKind.SIM_SWAP]


def test_reachability_and_roaming_notifications_become_disconnect_and_moved_out_of_coverage(
    push: Setup, operator: FakeOperator
) -> None:
    # Given an enrolled identity
    phone = new_number()
    push.enroll(phone)

    # When the device goes unreachable, then roams in Spain
    operator.script(phone, reachable=False)
    operator.script(phone, roamingCountry="ES")
    push.webhooks.deliver()

    # Then the receiver got both change events
    kinds = sorted(e["eventType"] for e in push.receiver.events.values())
    assert kinds == ["DISCONNECT", "MOVED_OUT_OF_COVERAGE"]


def test_a_repeated_notification_is_taken_once_and_again_after_seven_days(
    push: Setup, operator: FakeOperator, clock: FakeClock
) -> None:
    # Given a notification the stack took: the device went unreachable
    phone = new_number()
    push.enroll(phone)
    operator.script(phone, reachable=False)
    (first,) = operator.subscriptions.sent
    subscription = subscriptions_of(operator, phone)["reachability"]
    assert push.webhooks.deliver() == (1, 0)

    # When the operator sends it again (its retry after a lost answer)
    again = operator.subscriptions.deliver(subscription, first["event"])

    # Then it is answered 204 and makes no second event
    assert again == 204
    assert push.webhooks.deliver() == (0, 0)

    # When the same source and id come over a week later: a new notification (its record expired)
    clock.advance(days=7, seconds=1)
    assert operator.subscriptions.deliver(subscription, first["event"]) == 204
    assert push.webhooks.deliver() == (1, 0)
    assert [e["eventType"] for e in push.receiver.events.values()] == ["DISCONNECT", "DISCONNECT"]


def test_a_wrong_or_missing_token_is_401_a_malformed_event_400_and_an_ended_subscription_410(
    push: Setup, operator: FakeOperator, clock: FakeClock
) -> None:
    # Given an enrolled identity and a well-formed notification for its SIM swap subscription
    phone = new_number()
    service_id = push.enroll(phone)
    subscription = subscriptions_of(operator, phone)["sim-swap"]
    event = {
        "id": "event-1",
        "source": "https://operator.example",
        "type": SWAPPED,
        "specversion": "1.0",
        "datacontenttype": "application/json",
        "data": {"phoneNumber": phone, "subscriptionId": subscription.id},
        "time": clock.now().isoformat(),
    }
    selector, _, verifier = subscription.token.partition(".")

    # Then no token, another token and the right selector with a wrong verifier are 401 alike
    for token in (None, "not-a-token", f"{selector}.{verifier}x", f"unknown.{verifier}"):
        answer = notify(push.api, event, token)
        assert answer.status == 401, token
        assert answer.json() == {
            "code": 8002,
            "message": "Unauthorized: the notification's bearer token is not one this stack gave",
        }
    # And a body that is not a CloudEvent is 400, naming what is wrong
    for body, reason in (
        ("{not json", "body is not valid JSON"),
        ("[" * 40 + "]" * 40, "body nests arrays and objects over 32 levels deep"),
        (json.dumps({**event, "specversion": "0.3"}), "specversion must be 1.0"),
        (json.dumps({k: v for k, v in event.items() if k != "id"}), "id must be a non-empty string"),
        (json.dumps({**event, "data": {}}), "data.subscriptionId is required"),
        (json.dumps({**event, "time": "yesterday"}), "time must be an RFC 3339 date-time"),
    ):
        answer = notify(push.api, body, subscription.token)
        assert (answer.status, answer.json().get("code")) == (400, 8001), body
        assert answer.json()["message"] == f"Malformed request: {reason}"
    # And nothing was queued
    assert push.webhooks.deliver() == (0, 0)

    # When the identity is disenrolled
    disenroll(push, service_id)

    # Then its subscriptions are deleted at the operator, and a late notification is 410 Gone
    assert subscriptions_of(operator, phone) == {}
    gone = notify(push.api, event, subscription.token)
    assert gone.status == 410
    assert gone.json() == {"code": 8011, "message": "Subscription not found: it has ended"}


def test_deactivation_deletes_the_subscriptions_and_activation_makes_them_again(
    push: Setup, operator: FakeOperator
) -> None:
    phone = new_number()
    service_id = push.enroll(phone)
    before = {s.id for s in subscriptions_of(operator, phone).values()}

    push.deactivate(service_id)
    assert subscriptions_of(operator, phone) == {}

    answer = push.integrator.post(f"/v3/identity/{service_id}/activate", {})
    assert answer.status == 200, answer.body
    after = subscriptions_of(operator, phone)
    assert set(after) == {"sim-swap", "reachability", "roaming"}
    assert not before & {s.id for s in after.values()}


def test_the_monitor_polls_only_what_is_not_pushed(
    make_api: Callable[..., Api], operator: FakeOperator, receiver: tuple[Receiver, str], clock: FakeClock
) -> None:
    # Given an operator that offers SIM swap subscriptions only, and an enrolled identity's baseline
    state, url = receiver
    setup = stack(make_api, operator, url, state, "sim-swap")
    phone = new_number()
    setup.enroll(phone)
    assert set(subscriptions_of(operator, phone)) == {"sim-swap"}
    assert setup.webhooks.monitor_pass()["events"] == 0

    # When the SIM changes but its notification is lost, and the device goes unreachable
    operator.subscriptions.send = lambda *_: 0
    operator.script(phone, latestSimChange=clock.now(), reachable=False)
    clock.advance(hours=1)
    report = setup.webhooks.monitor_pass()
    setup.webhooks.deliver()

    # Then the pass found the unreachable device (polled), not the SIM swap (pushed, not polled)
    assert report["events"] == 1
    assert [e["eventType"] for e in setup.receiver.events.values()] == ["DISCONNECT"]


def test_an_ended_subscription_is_polled_again_and_made_anew_by_the_next_pass(
    push: Setup, operator: FakeOperator, clock: FakeClock
) -> None:
    # Given an enrolled identity whose baseline the monitor has
    phone = new_number()
    push.enroll(phone)
    push.webhooks.monitor_pass()
    ended = subscriptions_of(operator, phone)["sim-swap"]

    # When the operator ends its SIM swap subscription, and the SIM changes before the next pass
    operator.subscriptions.end(ended.id)
    assert operator.subscriptions.sent[-1]["status"] == 204
    operator.script(phone, latestSimChange=clock.now())
    clock.advance(hours=1)
    report = push.webhooks.monitor_pass()
    push.webhooks.deliver()

    # Then the pass polled the SIM swap (one event) and subscribed again
    assert report["events"] == 1
    assert [e["eventType"] for e in push.receiver.events.values()] == ["SIM_SWAP"]
    renewed = subscriptions_of(operator, phone)["sim-swap"]
    assert renewed.id != ended.id

    # And the next swap is pushed: the pass after finds nothing to poll for it
    operator.script(phone, latestSimChange=clock.now())
    push.webhooks.deliver()
    clock.advance(hours=1)
    assert push.webhooks.monitor_pass()["events"] == 0
    assert sorted(e["eventType"] for e in push.receiver.events.values()) == ["SIM_SWAP", "SIM_SWAP"]


def test_a_pass_renews_the_subscriptions_before_they_expire(
    push: Setup, operator: FakeOperator, clock: FakeClock
) -> None:
    # Given an identity subscribed for 30 days
    phone = new_number()
    push.enroll(phone)
    first = {s.id for s in subscriptions_of(operator, phone).values()}
    push.webhooks.monitor_pass()
    assert {s.id for s in subscriptions_of(operator, phone).values()} == first

    # When a pass runs 28 days later
    clock.advance(days=28)
    push.webhooks.monitor_pass()

    # Then each subscription was replaced by a new one, and the old ones deleted at the operator
    renewed = subscriptions_of(operator, phone)
    assert set(renewed) == {"sim-swap", "reachability", "roaming"}
    assert not first & {s.id for s in renewed.values()}


def test_push_never_logs_numbers_or_tokens(
    push: Setup, operator: FakeOperator, clock: FakeClock, logged: LogRecorder
) -> None:
    phone = new_number()
    service_id = push.enroll(phone)
    tokens = [s.token for s in operator.subscriptions.active()]
    operator.script(phone, latestSimChange=clock.now(), reachable=False)
    push.webhooks.deliver()
    disenroll(push, service_id)

    written = "\n".join(logged.lines)
    assert "push subscription made" in written
    assert "change event" in written
    assert phone not in written
    assert phone[1:] not in written
    for sent in operator.subscriptions.sent:
        assert sent["event"]["data"]["subscriptionId"] in written
    assert all(token.partition(".")[2] not in written for token in tokens)
