"""Secrets Manager's operations as IAM authorizes them."""

from __future__ import annotations

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack

MAPPERS = Mappers()


@MAPPERS.maps("secretsmanager", "GetSecretValue", "DescribeSecret")
def _secret(call: Call, _: Stack) -> list[Request]:
    """By the secret's ARN, which carries the random suffix AWS (and moto) append to its name."""
    arn = (call.response or {}).get("ARN") or call.params["SecretId"]
    if not str(arn).startswith("arn:"):
        arn = f"arn:aws:secretsmanager:{call.region}:{call.account}:secret:{arn}"
    return [Request(f"secretsmanager:{call.operation}", str(arn))]
