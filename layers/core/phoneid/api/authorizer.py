"""The REST API's Lambda (TOKEN) authorizer: access token in, IAM policy and caller context out."""

from __future__ import annotations

from typing import Any

from phoneid.domain.clients import Caller


def allow_policy(caller: Caller, method_arn: str) -> dict[str, Any]:
    """Allow every method of this API stage, so a cached decision serves the caller's next calls."""
    arn_prefix, _, path = method_arn.partition("/")
    stage = path.split("/", 1)[0]
    return {
        "principalId": caller.client_id,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": f"{arn_prefix}/{stage}/*"}
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
