"""The webhook functions called directly, as Lambda calls them, with the samples of ``events/``."""

from __future__ import annotations

import json

import pytest

from tests.harness import Api, load_event

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances


def test_monitor_sample_runs_one_pass(api: Api) -> None:
    # Given a stack with nothing enrolled
    # When the scheduler's sample event runs the monitor
    report = api.invoke("WebhookMonitorFunction", load_event("webhook_monitor/scheduled.json"))

    # Then it reports a complete pass over no identity
    assert report == {"identities": 0, "events": 0, "queued": 0, "skipped": 0, "complete": True}


def test_delivery_sample_for_a_client_without_webhook_is_consumed(api: Api) -> None:
    # Given the sample event of a client that registered no webhook
    credentials = api.create_client()
    event = load_event(
        "webhook_delivery/sqs.json", {"0123456789abcdef0123456789abcdef": credentials.client_id}
    )

    # When the delivery function gets it
    result = api.invoke("WebhookDeliveryFunction", event)

    # Then the message is consumed: no item is handed back for retry
    assert result == {"batchItemFailures": []}


def test_operator_notification_sample_with_a_token_no_subscription_has_is_401(api: Api) -> None:
    # Given the sample notification, whose bearer token the stack never gave
    event = load_event("operator_notifications/sim_swap.json", {"<SINK_TOKEN>": "selector.verifier"})

    # When the notifications function gets it
    result = api.invoke("OperatorNotificationsFunction", event)

    # Then it is refused with the error body, and nothing else is read
    assert result["statusCode"] == 401
    assert json.loads(result["body"]) == {
        "code": 8002,
        "message": "Unauthorized: the notification's bearer token is not one this stack gave",
    }
