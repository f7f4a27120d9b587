"""The ``Idempotency-Key`` header at the edge of the write routes that honour it
(docs/api.md#retries-with-an-idempotency-key).

Read after the rate limit and the body's checks (a request refused there is not a request that ran),
before routing: a retry of an answered request gets the answer kept for it, and the route never runs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.api import jsonbody
from phoneid.bootstrap import container
from phoneid.domain.idempotency import HEADER, Claimed, IdempotentRequest, Replay, fingerprint, parse_key


def _header_values(event: dict[str, Any], name: str) -> list[str]:
    """Every value sent for ``name``, in any case: API Gateway keeps each repeat in multiValueHeaders."""
    wanted = name.lower()
    for field in ("multiValueHeaders", "headers"):
        found = [
            value
            for header, values in (event.get(field) or {}).items()
            if isinstance(header, str) and header.lower() == wanted
            for value in (values if isinstance(values, list) else [values])
        ]
        if found:
            return [str(value) for value in found]
    return []


def keyed_request(event: dict[str, Any]) -> IdempotentRequest | None:
    """The request's key, its client and its fingerprint; None without the header (or without a
    client: the authorizer's refusal answers). A key that breaks the rule is a 400/8001 naming it."""
    values = _header_values(event, HEADER)
    if not values:
        return None
    key = parse_key(values)
    client_id = ((event.get("requestContext") or {}).get("authorizer") or {}).get("clientId")
    if not client_id:
        return None
    route = str(event.get("resource") or event.get("path") or "")
    body = jsonbody.parse(event.get("body") or "{}")
    method = str(event.get("httpMethod") or "POST")
    return IdempotentRequest(str(client_id), key, fingerprint(method, route, body))


def begin(event: dict[str, Any], context: LambdaContext) -> Claimed | Replay | None:
    """None for a request without a key; else the key claimed for this attempt, for as long as the
    function has left to run, or the key's answer (the first one again, 409, 422)."""
    request = keyed_request(event)
    if request is None:
        return None
    lease = timedelta(milliseconds=max(context.get_remaining_time_in_millis(), 0))
    return container().idempotency.begin(request, lease)


def run(claimed: Claimed | None, resolve: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``resolve``'s answer, kept under the claimed key (a success) or the key freed (anything else)."""
    if claimed is None:
        return resolve()
    requests = container().idempotency
    try:
        response = resolve()
    except BaseException:
        requests.abandon(claimed)
        raise
    requests.finish(claimed, response)
    return response
