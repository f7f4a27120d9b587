"""Every mapped operation, from each service's module, and the one way to map a call."""

from __future__ import annotations

from phoneid_dev.access.actions import (
    apigateway,
    awslambda,
    cloudwatch,
    dynamodb,
    kms,
    s3,
    secretsmanager,
    ses,
    sns,
    sqs,
    stepfunctions,
)
from phoneid_dev.access.actions.requests import Call, Mapper, Request, Stack, Unmapped

MAPPERS: dict[tuple[str, str], Mapper] = {
    **dynamodb.MAPPERS,
    **kms.MAPPERS,
    **s3.MAPPERS,
    **sns.MAPPERS,
    **sqs.MAPPERS,
    **ses.MAPPERS,
    **secretsmanager.MAPPERS,
    **awslambda.MAPPERS,
    **stepfunctions.MAPPERS,
    **apigateway.MAPPERS,
    **cloudwatch.MAPPERS,
}
# Operations that AWS does not authorize at all.
UNAUTHORIZED = {("sts", "GetCallerIdentity")}


def requests_of(call: Call, stack: Stack | None = None) -> list[Request]:
    """The IAM requests of ``call`` on ``stack``."""
    if (call.service, call.operation) in UNAUTHORIZED:
        return []
    mapper = MAPPERS.get((call.service, call.operation))
    if mapper is None:
        raise Unmapped(f"no IAM mapping for {call.service}.{call.operation}")
    try:
        return mapper(call, stack or Stack())
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise Unmapped(f"{call.service}.{call.operation}: parameters not understood ({error!r})") from error
