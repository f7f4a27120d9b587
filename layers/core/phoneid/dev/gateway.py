"""API Gateway (REST API) behaviour for the local stack: routing, the TOKEN authorizer, gateway
responses, and Lambda proxy integration, all as configured in ``template.yaml``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from phoneid.dev.events import LambdaContext, method_arn, rest_event
from phoneid.dev.stack import LocalStack

_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024  # API Gateway's own request limit


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


class LocalGateway:
    def __init__(self, stack: LocalStack) -> None:
        self._stack = stack
        self._template = stack.template
        self._authorizer_function, self._token_pattern = self._template.authorizer

    def _gateway_response(self, kind: str) -> HttpResponse:
        response = self._template.gateway_response(kind)
        return HttpResponse(response.status or 500, dict(response.headers), response.body)

    def handle(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: str | None,
        source_ip: str = "127.0.0.1",
    ) -> HttpResponse:
        route = next((r for r in self._template.routes if r.matches(method, path)), None)
        if route is None:
            # REST APIs answer an unknown path or method with 403 Missing Authentication Token.
            return self._gateway_response("MISSING_AUTHENTICATION_TOKEN")
        if body is not None and len(body.encode()) > _MAX_PAYLOAD_BYTES:
            return self._gateway_response("REQUEST_TOO_LARGE")
        lowered = {name.lower(): value for name, value in headers.items()}
        authorizer_context: dict[str, Any] | None = None
        if route.authorized:
            outcome = self._authorize(lowered.get("authorization"), route.method, route.path)
            if isinstance(outcome, HttpResponse):
                return outcome
            authorizer_context = outcome
        event = rest_event(
            method=route.method,
            path=path,
            resource=route.path,
            headers=lowered,
            body=body,
            authorizer=authorizer_context,
            source_ip=source_ip,
        )
        try:
            result = self._stack.invoke(route.function, event, LambdaContext(function_name=route.function))
        except Exception:
            return HttpResponse(
                502, {"Content-Type": "application/json"}, '{"message": "Internal server error"}'
            )
        return self._from_proxy_result(result)

    def _authorize(self, header: str | None, method: str, path: str) -> dict[str, Any] | HttpResponse:
        if not header or not self._token_pattern.match(header):
            return self._gateway_response("UNAUTHORIZED")
        event = {"type": "TOKEN", "authorizationToken": header, "methodArn": method_arn(method, path)}
        try:
            policy = self._stack.invoke(
                self._authorizer_function, event, LambdaContext(function_name=self._authorizer_function)
            )
        except Exception as error:
            kind = "UNAUTHORIZED" if str(error) == "Unauthorized" else "DEFAULT_5XX"
            return self._gateway_response(kind)
        statements = policy.get("policyDocument", {}).get("Statement", [])
        if not any(s.get("Effect") == "Allow" for s in statements):
            return self._gateway_response("ACCESS_DENIED")
        return {**policy.get("context", {}), "principalId": policy.get("principalId")}

    @staticmethod
    def _from_proxy_result(result: Mapping[str, Any]) -> HttpResponse:
        headers = {name: str(value) for name, value in (result.get("headers") or {}).items()}
        for name, values in (result.get("multiValueHeaders") or {}).items():
            headers[name] = ", ".join(str(v) for v in values)
        body = result.get("body") or ""
        if result.get("isBase64Encoded"):
            import base64

            body = base64.b64decode(body).decode()
        return HttpResponse(int(result.get("statusCode", 200)), headers, body)
