"""The API's errors as exceptions: one class, a subclass per way an integrator handles them.

Every error answer of the API is a JSON body with a numeric ``code`` and a ``message``
(docs/api.md#errors); the status says which subclass is raised. Catch ``PhoneIdError`` for all.
"""

from __future__ import annotations

import json
from typing import Any

import httpx


class PhoneIdError(Exception):
    """An error answer of the API: its HTTP ``status``, the API's ``code`` and ``message``.

    ``code`` is ``None`` only when the body was not the API's error body (a proxy's page, say).
    ``correlation_id`` and ``next`` are the body's, when it has them (``next`` with 8003 only);
    ``retry_after`` is the ``Retry-After`` header in seconds, when sent.
    """

    def __init__(
        self,
        status: int,
        code: int | None,
        message: str,
        *,
        correlation_id: str | None = None,
        client_request_id: str | None = None,
        next: dict[str, str] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}" if code is not None else f"{status}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.correlation_id = correlation_id
        self.client_request_id = client_request_id
        self.next = next
        self.retry_after = retry_after


class BadRequestError(PhoneIdError):
    """400 (and 413): the request breaks a rule (8001 names each parameter), a step before its turn
    (8003), no Sandbox user (8007), possession not finished (9100). Correct it and send it again."""


class AuthenticationError(PhoneIdError):
    """401 (8002): the credentials or the access token are not valid (the client fetched a new token
    and tried once more before raising)."""


class PermissionDeniedError(PhoneIdError):
    """403: no permission: a replayed step (8003), an unknown or expired correlationId (8008), a
    Sandbox user of another solution (8009), a country (8010), a revoked device (8019)."""


class NotFoundError(PhoneIdError):
    """404 (8011): no identity or device key of this client has that id."""


class IdempotencyError(PhoneIdError):
    """409 (8020) or 422 (8021): the ``Idempotency-Key`` is in use by a request still running, or was
    used for another request (docs/api.md#retries-with-an-idempotency-key)."""


class RateLimitError(PhoneIdError):
    """429 (8018): too many requests; wait ``retry_after`` seconds when it is set."""


class ServerError(PhoneIdError):
    """5xx (8000): an unexpected condition on the server; retry, then report the message's reference."""


def _class_for(status: int) -> type[PhoneIdError]:
    if status >= 500:
        return ServerError
    return {
        400: BadRequestError,
        401: AuthenticationError,
        403: PermissionDeniedError,
        404: NotFoundError,
        409: IdempotencyError,
        413: BadRequestError,
        422: IdempotencyError,
        429: RateLimitError,
    }.get(status, PhoneIdError)


def error_from_response(response: httpx.Response) -> PhoneIdError:
    """The exception for an error answer, from its status, body and ``Retry-After``."""
    try:
        body: Any = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    header = response.headers.get("retry-after", "")
    retry_after = int(header) if header.isdigit() else None
    error_class = _class_for(response.status_code)
    if not isinstance(body, dict) or not isinstance(body.get("code"), int):
        text = response.text.strip()[:200] or response.reason_phrase
        return error_class(response.status_code, None, text, retry_after=retry_after)
    return error_class(
        response.status_code,
        body["code"],
        str(body.get("message", "")),
        correlation_id=body.get("correlationId"),
        client_request_id=body.get("clientRequestId"),
        next=body.get("next"),
        retry_after=retry_after,
    )
