"""The service's error table: every API error code with its HTTP status (docs/api.md).

Errors are data: one class per code, one mapper (``phoneid.api.errors``) turns them into the
``{code, message, clientRequestId?, correlationId?, next?}`` body. Class names are stable: workflow
``Retry``/``Catch`` rules match on them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import ClassVar


class PhoneIdError(Exception):
    code: ClassVar[int] = 8000
    status: ClassVar[int] = 500
    default_message: ClassVar[str] = "Internal error"

    def __init__(
        self,
        message: str | None = None,
        *,
        next_step: Mapping[str, str] | None = None,
        correlation_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.next_step = dict(next_step) if next_step else None
        self.correlation_id = correlation_id
        self.headers = dict(headers) if headers else {}
        super().__init__(self.message)

    @property
    def http_status(self) -> int:
        return self.status


class InternalError(PhoneIdError):
    code = 8000
    status = 500
    default_message = "Internal error; retry the request"
    reference: str | None = None
    # Set by the adapter that raised it from a provider's throttling (phoneid.adapters.throttling).
    throttled: bool = False

    @classmethod
    def referenced(cls, detail: str = "") -> InternalError:
        """An 8000 whose message names a fresh reference (``reference``), for the raiser to log with
        what failed; ``detail`` follows "Internal error" (" during key binding") and never holds PII."""
        reference = uuid.uuid4().hex[:12]
        error = cls(f"Internal error{detail}; retry the request (reference {reference})")
        error.reference = reference
        return error


class MalformedRequest(PhoneIdError):
    """Body not valid JSON, over 4 KB, or bad parameters; the message names each invalid parameter."""

    code = 8001
    status = 400
    default_message = "Malformed request"

    def __init__(self, message: str | None = None, *, problems: Mapping[str, str] | None = None) -> None:
        # Reasons describe the rule broken, never the value sent: values can be PII.
        self.parameters = sorted(problems or {})
        if problems and message is None:
            message = "Invalid parameters: " + "; ".join(
                f"{name}: {problems[name]}" for name in self.parameters
            )
        super().__init__(message)


class Unauthorized(PhoneIdError):
    code = 8002
    status = 401
    default_message = "Unauthorized request: credentials missing or invalid"


class StepOutOfOrder(PhoneIdError):
    """A step called before its turn: 400, ``next`` names the call to make."""

    code = 8003
    status = 400
    default_message = "Step called out of order"


class StepAlreadyCompleted(StepOutOfOrder):
    """The same step again after its 200 (or any step after the flow ended): HTTP 403."""

    status = 403
    default_message = "Step already completed for this correlationId"


class SandboxUserNotFound(PhoneIdError):
    code = 8007
    status = 400
    default_message = "No Sandbox test user matches the phone number"


class InvalidCorrelationId(PhoneIdError):
    code = 8008
    status = 403
    default_message = "Invalid correlationId: unknown, expired or not valid for these credentials"


class SandboxAccessDenied(PhoneIdError):
    code = 8009
    status = 403
    default_message = "Sandbox test user access denied: the credentials belong to another solution"


class UnauthorizedForCountry(PhoneIdError):
    code = 8010
    status = 403
    default_message = "Unauthorized for country"


class IdentityNotFound(PhoneIdError):
    code = 8011
    status = 404
    default_message = "Identity not found"


class SubscriptionGone(PhoneIdError):
    """An operator's notification for a subscription that has ended: CAMARA's 410 tells the
    operator to stop sending to this sink."""

    code = 8011
    status = 410
    default_message = "Subscription not found: it has ended"


class RateLimitExceeded(PhoneIdError):
    code = 8018
    status = 429
    default_message = "Rate limit exceeded; wait for Retry-After seconds"


class DeviceRevoked(PhoneIdError):
    code = 8019
    status = 403
    default_message = "Device has been revoked; start a new unify session and complete possession"


class IdempotencyKeyInUse(PhoneIdError):
    """A request under the same Idempotency-Key is still running
    (docs/api.md#retries-with-an-idempotency-key)."""

    code = 8020
    status = 409
    default_message = "A request with this Idempotency-Key is still in progress; retry once it has answered"


class IdempotencyKeyReused(PhoneIdError):
    """The Idempotency-Key was used with another request: another body, path or method."""

    code = 8021
    status = 422
    default_message = (
        "This Idempotency-Key was used with a different request;"
        " a key names one request (method, path and body)"
    )


class PossessionIncomplete(PhoneIdError):
    code = 9100
    status = 400
    default_message = "Phone possession incomplete"


class PhoneNumberKeyMismatch(PhoneIdError):
    code = 9101
    status = 400
    default_message = "Phone number does not match the key; restart with rebind=true"


ALL_ERRORS: tuple[type[PhoneIdError], ...] = (
    InternalError,
    MalformedRequest,
    Unauthorized,
    StepOutOfOrder,
    SandboxUserNotFound,
    InvalidCorrelationId,
    SandboxAccessDenied,
    UnauthorizedForCountry,
    IdentityNotFound,
    RateLimitExceeded,
    DeviceRevoked,
    IdempotencyKeyInUse,
    IdempotencyKeyReused,
    PossessionIncomplete,
    PhoneNumberKeyMismatch,
)
