"""API Gateway (REST API) behaviour for the local stack: routing, the TOKEN authorizer, gateway
responses, and Lambda proxy integration, all as configured in ``template.yaml``."""

from __future__ import annotations

import base64
import json
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from phoneid_dev.events import LambdaContext, method_arn, rest_event
from phoneid_dev.stack import LocalStack

_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024  # API Gateway's own request limit


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


class AuthorizerAnswers:
    """API Gateway's authorizer cache: a policy is kept per authorizer and Authorization header for
    the authorizer's ``ReauthorizeEvery`` seconds of the stack's clock, and serves every request
    with that header meanwhile (a disabled client is refused within that time, as in AWS). Only
    policies are kept, allow or deny; a 401 or a failed authorizer is asked again next time."""

    MAX_ANSWERS = 10_000

    def __init__(self, now: Callable[[], datetime]) -> None:
        self._now = now
        self._answers: dict[tuple[str, str], tuple[datetime, dict[str, Any] | None]] = {}
        self._lock = threading.Lock()

    def get(self, name: str, header: str) -> tuple[bool, dict[str, Any] | None]:
        """(found, the allowed context or None for a denial)."""
        with self._lock:
            kept = self._answers.get((name, header))
            if kept is None:
                return False, None
            if kept[0] <= self._now():
                del self._answers[(name, header)]
                return False, None
            return True, kept[1]

    def put(self, name: str, header: str, seconds: int, context: dict[str, Any] | None) -> None:
        with self._lock:
            if len(self._answers) >= self.MAX_ANSWERS:
                self._answers.pop(next(iter(self._answers)))  # the oldest
            self._answers[(name, header)] = (self._now() + timedelta(seconds=seconds), context)


class LocalGateway:
    """``answers``: API Gateway's authorizer cache (``phoneid dev``). Without it every request asks
    the authorizer, which the test harness wants: each test sees the authorizer's own calls."""

    def __init__(self, stack: LocalStack, answers: AuthorizerAnswers | None = None) -> None:
        self._stack = stack
        self._template = stack.template
        # As API Gateway chooses: a path's literal segment before a variable one, so that
        # /v3/decisions/summary is never taken for /v3/decisions/{id}.
        self._routes = sorted(
            self._template.routes + self._template.preflights, key=lambda r: r.path.count("{")
        )
        self._authorizers = self._template.authorizers
        self._cors = self._template.cors
        self._answers = answers

    def _gateway_response(self, kind: str) -> HttpResponse:
        response = self._template.gateway_response(kind)
        # The one variable the template's bodies use: API Gateway's id of the request (its access log's).
        body = response.body.replace("$context.requestId", str(uuid.uuid4()))
        return HttpResponse(response.status or 500, dict(response.headers), body)

    def resource(self, method: str, path: str) -> str:
        """How a request is named in the stack's log: its route's path as the template has it, as
        API Gateway's ``resourcePath`` (``/l/{token}``: a link's token is a credential, and a log
        line must not carry it); a path no route takes, as it came."""
        route = next((r for r in self._routes if r.matches(method, path)), None)
        return route.path if route is not None else path

    def throttled(self) -> HttpResponse:
        """What API Gateway answers past its throttle: 429/8018 with Retry-After, as the template says."""
        return self._gateway_response("THROTTLED")

    def handle(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: str | None,
        source_ip: str = "127.0.0.1",
        query: Mapping[str, str] | None = None,
        host: str = "localhost",
    ) -> HttpResponse:
        if (
            method.upper() == "OPTIONS"
            and self._cors
            and any(r.parameters(path) is not None for r in self._routes)
        ):
            # The CORS preflight is answered by API Gateway itself, without authorizer or function.
            return HttpResponse(200, dict(self._cors), "")
        route = next((r for r in self._routes if r.matches(method, path)), None)
        if route is None:
            # REST APIs answer an unknown path or method with 403 Missing Authentication Token.
            return self._gateway_response("MISSING_AUTHENTICATION_TOKEN")
        if body is not None and len(body.encode()) > _MAX_PAYLOAD_BYTES:
            return self._gateway_response("REQUEST_TOO_LARGE")
        lowered = {name.lower(): value for name, value in headers.items()}
        authorizer_context: dict[str, Any] | None = None
        if route.authorizer is not None:
            outcome = self._authorize(
                route.authorizer, lowered.get("authorization"), route.method, route.path
            )
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
            query=query,
            path_parameters=route.parameters(path),
            domain_name=host,
        )
        try:
            result = self._stack.invoke(route.function, event, LambdaContext(function_name=route.function))
        except Exception:
            return HttpResponse(
                502, {"Content-Type": "application/json"}, '{"message": "Internal server error"}'
            )
        return self._from_proxy_result(result)

    def _authorize(
        self, name: str, header: str | None, method: str, path: str
    ) -> dict[str, Any] | HttpResponse:
        authorizer = self._authorizers[name]
        if not header or not authorizer.header_pattern.match(header):
            return self._gateway_response("UNAUTHORIZED")
        if self._answers is not None:
            found, context = self._answers.get(name, header)
            if found:
                return dict(context) if context is not None else self._gateway_response("ACCESS_DENIED")
        event = {"type": "TOKEN", "authorizationToken": header, "methodArn": method_arn(method, path)}
        try:
            policy = self._stack.invoke(
                authorizer.function, event, LambdaContext(function_name=authorizer.function)
            )
        except Exception as error:
            kind = "UNAUTHORIZED" if str(error) == "Unauthorized" else "DEFAULT_5XX"
            return self._gateway_response(kind)
        statements = policy.get("policyDocument", {}).get("Statement", [])
        allowed = any(s.get("Effect") == "Allow" for s in statements)
        context = {**policy.get("context", {}), "principalId": policy.get("principalId")} if allowed else None
        if self._answers is not None:
            self._answers.put(name, header, authorizer.reauthorize_every, context)
        return context if context is not None else self._gateway_response("ACCESS_DENIED")

    @staticmethod
    def _from_proxy_result(result: Mapping[str, Any]) -> HttpResponse:
        headers = {name: str(value) for name, value in (result.get("headers") or {}).items()}
        for name, values in (result.get("multiValueHeaders") or {}).items():
            headers[name] = ", ".join(str(v) for v in values)
        body = result.get("body") or ""
        if result.get("isBase64Encoded"):
            body = base64.b64decode(body).decode()
        return HttpResponse(int(result.get("statusCode", 200)), headers, body)
