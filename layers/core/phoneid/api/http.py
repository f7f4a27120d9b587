"""The resolver factory and the Lambda entrypoint every handler shares.

One decorator stack for all handlers; checks that must run before routing (rate limit, body size,
Content-Type and JSON) run here; every error leaves through ``phoneid.api.errors``, an unexpected one
too: no request makes a handler fail with API Gateway's bare 502.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.api import errors, idempotency, jsonbody
from phoneid.bootstrap import container
from phoneid.domain.clients import ALL_COUNTRIES, Caller, Flag, Solution
from phoneid.domain.errors import InternalError, MalformedRequest, PhoneIdError, Unauthorized
from phoneid.domain.idempotency import Replay
from phoneid.domain.tokens import FlowToken
from phoneid.tasks import Handler, metrics_cleared, traced

logger = Logger()
metrics = Metrics()

MAX_BODY_BYTES = 4096


def _request_fields(event: dict[str, Any]) -> dict[str, Any]:
    """The ids an error body echoes: from the body, or (GET and DELETE) clientRequestId from the query."""
    request = dict(errors.request_fields(event.get("body")))
    query = event.get("queryStringParameters") or {}
    request.setdefault("clientRequestId", query.get("clientRequestId") if isinstance(query, dict) else None)
    return request


def _respond(app: APIGatewayRestResolver, error: PhoneIdError) -> Response[str]:
    metrics.add_metric(name=f"Error{error.code}", unit=MetricUnit.Count, value=1)
    request = _request_fields(app.current_event.raw_event)
    return Response(
        status_code=error.http_status,
        content_type="application/json",
        body=errors.to_json(errors.error_body(error, request)),
        headers=error.headers,
    )


def make_app(*, browser: bool = False) -> APIGatewayRestResolver:
    """A resolver for one route; ``browser`` routes (the client API) answer cross-origin calls."""
    cors = CORSConfig(allow_origin="*", allow_headers=["Authorization", "Content-Type"], max_age=600)
    app = APIGatewayRestResolver(enable_validation=True, cors=cors if browser else None)

    @app.exception_handler(PhoneIdError)
    def _domain(error: PhoneIdError) -> Response[str]:
        logger.info("request refused", extra={"code": error.code, "status": error.http_status})
        return _respond(app, error)

    @app.exception_handler(RequestValidationError)
    def _invalid(error: RequestValidationError) -> Response[str]:
        mapped = errors.from_validation([_as_sent(e) for e in error.errors()])
        logger.info("invalid request", extra={"code": mapped.code, "parameters": mapped.parameters})
        return _respond(app, mapped)

    @app.exception_handler(NotFoundError)
    def _unroutable(error: NotFoundError) -> Response[str]:
        # API Gateway matched the route, so the path has the function's shape; the resolver refuses
        # only characters that no value of a path parameter can hold (a NUL, a control character).
        refused = MalformedRequest("Malformed request: the path holds characters no parameter may have")
        logger.info("request refused", extra={"code": refused.code, "status": refused.http_status})
        return _respond(app, refused)

    @app.exception_handler(Exception)
    def _unexpected(error: Exception) -> Response[str]:
        return _respond(app, _logged_unexpected(error))

    return app


def _as_sent(error: dict[str, Any]) -> dict[str, Any]:
    """Query and path parameters named as sent (``limit``, not ``query.limit``), like body fields."""
    location = tuple(error.get("loc", ()))
    return {**error, "loc": location[1:]} if location[:1] in (("query",), ("path",)) else error


def _logged_unexpected(error: BaseException) -> PhoneIdError:
    """An 8000 whose reference is logged with where it failed, never the exception's text: messages
    (pydantic's among them) can carry PII."""
    mapped = InternalError.referenced()
    logger.error(
        "unexpected error",
        extra={"reference": mapped.reference, "error_type": type(error).__name__, "where": _frames(error)},
    )
    return mapped


def _frames(error: BaseException) -> list[str]:
    import traceback

    return [
        f"{frame.filename}:{frame.lineno} {frame.name}" for frame in traceback.extract_tb(error.__traceback__)
    ]


def caller(app: APIGatewayRestResolver) -> Caller:
    """The client the authorizer established."""
    return _caller(app.current_event.request_context.authorizer.raw_event or {})


def _caller(context: dict[str, Any]) -> Caller:
    """A Caller from an authorizer's context, which carries only strings."""
    client_id, solution = context.get("clientId"), context.get("solution")
    if not client_id or not isinstance(solution, str) or solution not in set(Solution):
        raise Unauthorized()
    countries = context.get("countries") or ALL_COUNTRIES
    flags = context.get("flags") or ""
    return Caller(
        client_id=client_id,
        solution=Solution(solution),
        allowed_countries=frozenset(countries.split(",")),
        flags=frozenset(Flag(f) for f in flags.split(",") if f),
    )


def flow_token(app: APIGatewayRestResolver) -> FlowToken:
    """The flow an authToken opened, and its client, as the client API's authorizer established."""
    context = app.current_event.request_context.authorizer.raw_event or {}
    if not context.get("correlationId"):
        raise Unauthorized()
    return FlowToken(_caller(context), context["correlationId"], context.get("publicApiKey") or "")


def public_base_url(app: APIGatewayRestResolver) -> str:
    """Where phones and SDKs reach this API: the configured base URL, else this request's host and stage."""
    configured = container().settings.public_base_url
    if configured:
        return configured.rstrip("/")
    context = app.current_event.request_context
    return f"https://{context.domain_name}/{context.stage}"


def _byte_size(body: str) -> int:
    try:
        return len(body.encode())
    except UnicodeEncodeError:  # a lone surrogate: not text any parser downstream would read alike
        raise MalformedRequest("Malformed request: body is not valid JSON") from None


def declares(event: dict[str, Any], media_type: str) -> bool:
    """Content-Type is ``media_type``, in any case and with any parameters (``; charset=utf-8``)."""
    declared = [
        str(value)
        for name, value in (event.get("headers") or {}).items()
        if isinstance(name, str) and name.lower() == "content-type"
    ]
    return bool(declared) and all(value.split(";", 1)[0].strip().lower() == media_type for value in declared)


def _check_json_body(event: dict[str, Any], max_body_bytes: int = MAX_BODY_BYTES) -> None:
    body = event.get("body") or ""
    if event.get("isBase64Encoded") or not isinstance(body, str):
        raise MalformedRequest("Malformed request: body must be JSON text")
    if _byte_size(body) > max_body_bytes:
        raise MalformedRequest(f"Malformed request: body is over {max_body_bytes} bytes")
    # JSON declared as anything else is a client bug; reading it anyway lets a WAF that trusts the
    # header and this handler see two different requests (docs/api.md#request-bodies-read-strictly).
    if not declares(event, "application/json"):
        raise MalformedRequest("Malformed request: Content-Type must be application/json")
    if not isinstance(jsonbody.parse(body), dict):
        raise MalformedRequest("Malformed request: body must be a JSON object")


def source_address(event: dict[str, Any]) -> str:
    return str(((event.get("requestContext") or {}).get("identity") or {}).get("sourceIp") or "unknown")


def _as_json(event: dict[str, Any]) -> None:
    """The body was checked to be a JSON object sent as application/json: spell the header as the
    resolver's validation expects it (exactly ``application/json``, not ``Application/JSON; charset=...``)."""
    for field in ("headers", "multiValueHeaders"):
        headers = event.get(field) or {}
        for name in [n for n in headers if n.lower() == "content-type"]:
            del headers[name]
        headers["Content-Type"] = ["application/json"] if field == "multiValueHeaders" else "application/json"
        event[field] = headers


def _authorized_caller(event: dict[str, Any]) -> str:
    """The integrator's client id; for client API calls, the customer's flow (25/s each, not shared)."""
    context = (event.get("requestContext") or {}).get("authorizer") or {}
    if context.get("correlationId"):
        return f"flow:{context['correlationId']}"
    return str(context.get("clientId") or f"source:{source_address(event)}")


def entrypoint(
    app: APIGatewayRestResolver,
    *,
    rate_key: Callable[[dict[str, Any]], str] = _authorized_caller,
    json_body: bool = True,
    browser: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
    idempotent: bool = False,
) -> Handler:
    """The Lambda handler for ``app``, with the same decorator stack and edge checks everywhere.

    ``max_body_bytes`` is the API's 4 KB unless a route needs more (batch enrollment,
    docs/api.md#bodies-of-the-batch-calls). An ``idempotent`` route honours the Idempotency-Key
    header (docs/api.md#retries-with-an-idempotency-key).
    """

    def refusal(error: PhoneIdError, event: dict[str, Any]) -> dict[str, Any]:
        refused = errors.proxy_response(error, _request_fields(event))
        if browser:
            refused["headers"]["Access-Control-Allow-Origin"] = "*"
        return refused

    def answer(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        if browser and event.get("httpMethod") == "OPTIONS":
            # The CORS preflight: no token, no body, nothing read or stored; the resolver's CORS
            # configuration answers it (204 with the allowed origin, headers and methods).
            preflight: dict[str, Any] = app.resolve(event, context)
            return preflight
        try:
            container().rate_limit.check(rate_key(event))
            if json_body:
                _check_json_body(event, max_body_bytes)
                _as_json(event)
            keyed = idempotency.begin(event, context) if idempotent else None
        except PhoneIdError as error:
            logger.info("request refused at the edge", extra={"code": error.code})
            metrics.add_metric(name=f"Error{error.code}", unit=MetricUnit.Count, value=1)
            return refusal(error, event)
        response: dict[str, Any]
        if isinstance(keyed, Replay):  # answered before under its Idempotency-Key: the route does not run
            metrics.add_metric(name="IdempotentReplays", unit=MetricUnit.Count, value=1)
            response = keyed.response
        else:
            response = idempotency.run(keyed, lambda: app.resolve(event, context))
        metrics.add_metric(
            name=f"Responses{str(response['statusCode'])[0]}xx", unit=MetricUnit.Count, value=1
        )
        return response

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
    @traced
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        # Whatever escapes the checks or the resolver (its own error mapping included) is an 8000
        # with a logged reference, never an exception out of Lambda: API Gateway's bare 502.
        try:
            return answer(event, context)
        except Exception as error:
            failed = _logged_unexpected(error)
            metrics.add_metric(name=f"Error{failed.code}", unit=MetricUnit.Count, value=1)
            return refusal(failed, event)

    answered = metrics_cleared(handler, metrics)

    def guarded(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        try:
            return answered(event, context)
        except Exception as error:  # in the decorators themselves: the same 8000
            return refusal(_logged_unexpected(error), event)

    return guarded


def parse_form(body: str | None) -> dict[str, str]:
    """A form-encoded body with each field once; anything else is an 8001."""
    from urllib.parse import parse_qsl

    if body is not None and not isinstance(body, str):
        raise MalformedRequest("Malformed request: body is not form-encoded")
    try:
        size = len((body or "").encode())
    except UnicodeEncodeError:
        raise MalformedRequest("Malformed request: body is not form-encoded") from None
    if size > MAX_BODY_BYTES:
        raise MalformedRequest(f"Malformed request: body is over {MAX_BODY_BYTES} bytes")
    try:
        pairs = parse_qsl(body or "", keep_blank_values=True, strict_parsing=bool(body))
    except ValueError:  # UnicodeError among them
        raise MalformedRequest("Malformed request: body is not form-encoded") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise MalformedRequest(problems={name: "must appear once"})
        form[name] = value
    return form
