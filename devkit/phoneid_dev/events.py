"""API Gateway REST proxy events, Lambda contexts and Lambda's error payload, as API Gateway and
Lambda make them."""

from __future__ import annotations

import time
import traceback
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from phoneid_dev.template import Template


@dataclass
class LambdaContext:
    function_name: str = "phoneid-local"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:phoneid-local"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/phoneid-local"
    log_stream_name: str = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


@dataclass
class FunctionContext(LambdaContext):
    """A Lambda context whose remaining time is the function's own timeout (from the template)."""

    timeout_seconds: float = 3.0

    def get_remaining_time_in_millis(self) -> int:
        return int(self.timeout_seconds * 1000)


def function_context(template: Template, logical_id: str) -> FunctionContext:
    props = template.of_type("AWS::Serverless::Function")[logical_id]
    shared = template.document.get("Globals", {}).get("Function", {})
    timeout = float(props.get("Timeout", shared.get("Timeout", 3)))
    return FunctionContext(function_name=logical_id, timeout_seconds=timeout)


def lambda_error(error: BaseException) -> dict[str, Any]:
    """Lambda's payload for a handler that raised: Step Functions matches ``errorType``."""
    return {
        "errorType": type(error).__name__,
        "errorMessage": str(error),
        "requestId": str(uuid.uuid4()),
        "stackTrace": traceback.format_tb(error.__traceback__),
    }


def rest_event(
    *,
    method: str,
    path: str,
    resource: str,
    headers: Mapping[str, str],
    body: str | None,
    query: Mapping[str, str] | None = None,
    authorizer: Mapping[str, Any] | None = None,
    source_ip: str = "127.0.0.1",
    stage: str = "live",
    path_parameters: Mapping[str, str] | None = None,
    domain_name: str = "localhost",
) -> dict[str, Any]:
    """A REST API (v1) Lambda proxy event."""
    request_id = str(uuid.uuid4())
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method.upper(),
        "headers": dict(headers),
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": dict(query) if query else None,
        "multiValueQueryStringParameters": {k: [v] for k, v in query.items()} if query else None,
        "pathParameters": dict(path_parameters) if path_parameters else None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method.upper(),
            "path": f"/{stage}{path}",
            "stage": stage,
            "requestId": request_id,
            "extendedRequestId": request_id,
            "requestTimeEpoch": int(time.time() * 1000),
            "protocol": "HTTP/1.1",
            "identity": {"sourceIp": source_ip, "userAgent": headers.get("user-agent", "")},
            "authorizer": dict(authorizer) if authorizer else None,
            "accountId": "123456789012",
            "apiId": "local",
            "domainName": domain_name,
        },
        "body": body,
        "isBase64Encoded": False,
    }


def method_arn(method: str, path: str, stage: str = "live") -> str:
    return f"arn:aws:execute-api:us-east-1:123456789012:local/{stage}/{method.upper()}{path}"


def websocket_event(
    *,
    route_key: str,
    connection_id: str,
    query: Mapping[str, str] | None,
    domain_name: str,
    stage: str = "live",
) -> dict[str, Any]:
    """An API Gateway WebSocket API Lambda proxy event."""
    return {
        "requestContext": {
            "routeKey": route_key,
            "eventType": {"$connect": "CONNECT", "$disconnect": "DISCONNECT"}.get(route_key, "MESSAGE"),
            "connectionId": connection_id,
            "domainName": domain_name,
            "stage": stage,
            "apiId": "local",
            "requestId": str(uuid.uuid4()),
            "connectedAt": int(time.time() * 1000),
        },
        "queryStringParameters": dict(query) if query else None,
        "isBase64Encoded": False,
    }
