"""PhoneID's server SDK: the server-to-server API with typed requests and answers, the access token
kept for you, typed errors and the webhook signature check. See clients/python/README.md."""

from phoneid_client import models
from phoneid_client.client import PhoneIdClient
from phoneid_client.errors import (
    AuthenticationError,
    BadRequestError,
    IdempotencyError,
    NotFoundError,
    PermissionDeniedError,
    PhoneIdError,
    RateLimitError,
    ServerError,
)
from phoneid_client.webhooks import WebhookEvent, WebhookVerificationError, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "IdempotencyError",
    "NotFoundError",
    "PermissionDeniedError",
    "PhoneIdClient",
    "PhoneIdError",
    "RateLimitError",
    "ServerError",
    "WebhookEvent",
    "WebhookVerificationError",
    "models",
    "verify_webhook",
]
