"""SNS's operations as IAM authorizes them."""

from __future__ import annotations

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack, Unmapped

MAPPERS = Mappers()


@MAPPERS.maps("sns", "Publish")
def _sns_publish(call: Call, _: Stack) -> list[Request]:
    """To a topic or an endpoint by its ARN; an SMS to a phone number has no ARN (``*``)."""
    target = call.params.get("TopicArn") or call.params.get("TargetArn")
    if target:
        return [Request("sns:Publish", str(target))]
    if call.params.get("PhoneNumber"):
        return [Request("sns:Publish", "*")]
    raise Unmapped("sns.Publish names no topic, target or phone number")


@MAPPERS.maps("sns", "PublishBatch")
def _sns_publish_batch(call: Call, _: Stack) -> list[Request]:
    return [Request("sns:Publish", str(call.params["TopicArn"]))]
