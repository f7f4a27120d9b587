"""The webhook functions called directly, as Lambda calls them, with the samples of ``events/``."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from phoneid_dev.template import template
from tests.harness import Api, load_event

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances


def test_monitor_samples_plan_a_pass_check_a_segment_and_sum_it_up(make_api: Callable[..., Api]) -> None:
    # Given a stack deployed with the template's default segments, with nothing enrolled
    default = template().parameter_defaults()["MonitorMaxSegments"]
    api = make_api(parameters={"MonitorMaxSegments": default})
    # When the workflow's sample events run its three steps
    plan = api.invoke("MonitorPlanFunction", load_event("monitor_plan/scheduled.json"))
    segment = api.invoke("WebhookMonitorFunction", load_event("webhook_monitor/segment.json"))
    summary = api.invoke("MonitorSummaryFunction", load_event("monitor_summary/pass.json"))

    # Then the pass has its 16 segments, the first is done over no identity, and the pass is not finished
    assert (plan["passId"], plan["totalSegments"]) == ("2026-03-02T06:00:00Z", 16)
    assert plan["segments"] == list(range(16))
    assert segment == {
        "passId": "2026-03-02T06:00:00Z",
        "segment": 0,
        "done": True,
        "checked": 0,
        "events": 0,
    }
    assert (summary["segmentsDone"], summary["checked"], summary["finishedAt"]) == (1, 0, None)


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
