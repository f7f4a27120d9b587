"""CloudWatch's metric writes as IAM authorizes them."""

from __future__ import annotations

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack

MAPPERS = Mappers()


@MAPPERS.maps("cloudwatch", "PutMetricData")
def _metrics(call: Call, _: Stack) -> list[Request]:
    return [Request("cloudwatch:PutMetricData", "*", {"cloudwatch:namespace": str(call.params["Namespace"])})]
