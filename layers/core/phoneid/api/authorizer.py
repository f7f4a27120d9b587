"""The REST API's Lambda (TOKEN) authorizers: a token in, an IAM policy and the caller's context out."""

from __future__ import annotations

from typing import Any

from phoneid.domain.clients import Caller
from phoneid.domain.tokens import FlowToken


def _allow(principal: str, method_arn: str, context: dict[str, str]) -> dict[str, Any]:
    """Allow every method of this API stage, so a cached decision serves the caller's next calls.

    Context values must be strings, numbers or booleans.
    """
    arn_prefix, _, path = method_arn.partition("/")
    stage_wide = f"{arn_prefix}/{path.split('/', 1)[0]}/*"
    return {
        "principalId": principal,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": stage_wide}],
        },
        "context": context,
    }


def _caller_context(caller: Caller) -> dict[str, str]:
    return {
        "clientId": caller.client_id,
        "solution": caller.solution.value,
        "countries": ",".join(sorted(caller.allowed_countries)),
        "flags": ",".join(sorted(f.value for f in caller.flags)),
    }


def allow_policy(caller: Caller, method_arn: str) -> dict[str, Any]:
    """The integrator's decision: its client id, solution, countries and flags travel to the handlers."""
    return _allow(caller.client_id, method_arn, _caller_context(caller))


def allow_flow_policy(flow: FlowToken, method_arn: str) -> dict[str, Any]:
    """The client API's decision: this authToken may act on its own flow only. The client's facts
    travel too, so no handler reads the client again (they may lag a change by the cache's TTL, as
    the decision itself does)."""
    return _allow(
        flow.correlation_id,
        method_arn,
        {
            **_caller_context(flow.caller),
            "correlationId": flow.correlation_id,
            "publicApiKey": flow.public_api_key,
        },
    )
