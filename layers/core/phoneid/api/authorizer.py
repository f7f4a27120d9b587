"""The REST API's Lambda (TOKEN) authorizer: access token in, IAM policy and caller context out."""

from __future__ import annotations

from typing import Any

from phoneid.domain.clients import Caller
from phoneid.domain.tokens import FlowToken


def _stage_wide(method_arn: str) -> str:
    arn_prefix, _, path = method_arn.partition("/")
    return f"{arn_prefix}/{path.split('/', 1)[0]}/*"


def allow_policy(caller: Caller, method_arn: str) -> dict[str, Any]:
    """Allow every method of this API stage, so a cached decision serves the caller's next calls."""
    return {
        "principalId": caller.client_id,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": _stage_wide(method_arn)}
            ],
        },
        # Context values must be strings, numbers or booleans.
        "context": {
            "clientId": caller.client_id,
            "solution": caller.solution.value,
            "countries": ",".join(sorted(caller.allowed_countries)),
            "flags": ",".join(sorted(f.value for f in caller.flags)),
        },
    }


def allow_flow_policy(flow: FlowToken, method_arn: str) -> dict[str, Any]:
    """The client API's decision: this authToken may act on its own flow only."""
    return {
        "principalId": flow.correlation_id,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": _stage_wide(method_arn)}
            ],
        },
        "context": {"clientId": flow.client_id, "correlationId": flow.correlation_id},
    }
