"""boto3 plumbing shared by the AWS adapters: clients made once, provider errors translated."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from aws_lambda_powertools import Logger
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.throttling import is_throttled
from phoneid.domain.errors import InternalError

logger = Logger(child=True)

# docs/adr/0054-retries-and-timeouts-of-aws-calls.md: one call, all its attempts and backoff
# included, ends well inside the 10 s function timeout, so a stuck dependency is answered with an
# 8000 by the function rather than cut off by Lambda: 3 x (1 s + 1 s) + at most 3 s of backoff.
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=1, read_timeout=1)
# A Publish is not idempotent: a read timeout after SNS accepted it, retried, texts twice. So SNS
# waits longer for its answer and tries twice at most: 2 x (1 s + 3 s) + at most 1 s.
_CONFIGS = {
    "sns": Config(retries={"mode": "standard", "max_attempts": 2}, connect_timeout=1, read_timeout=3),
    # A signer runs the key rotation when its window has no key (a new stack): a cold start, a table
    # read, a KMS call and two writes. Once; the rotation's own writes are conditional.
    "lambda": Config(retries={"mode": "standard", "max_attempts": 1}, connect_timeout=1, read_timeout=5),
}


def client_config(service: str) -> Config:
    return _CONFIGS.get(service, _CONFIG)


def new_client(service: str, endpoint_url: str | None = None) -> Any:
    """A client for ``service``. The container makes one per service, on first use
    (``phoneid.wiring.aws``)."""
    config = client_config(service)
    if endpoint_url:
        return boto3.client(service, config=config, endpoint_url=endpoint_url)  # type: ignore[call-overload]
    return boto3.client(service, config=config)  # type: ignore[call-overload]


def internal_error(operation: str, error: BaseException | None = None) -> InternalError:
    """The 8000 for a failed AWS call (retries spent): its reference is logged with the operation and
    the provider's error code, never the provider's message (it can quote keys and values). Marked
    ``throttled`` when the provider was throttling (a Connect chunk is then retried)."""
    internal = InternalError.referenced(f" during {operation}")
    internal.throttled = error is not None and is_throttled(error)
    logger.error(
        "AWS call failed",
        extra={
            "reference": internal.reference,
            "operation": operation,
            "error_type": type(error).__name__ if error is not None else None,
            "error_code": error_code(error) if isinstance(error, ClientError) else None,
        },
    )
    return internal


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


@contextmanager
def provider_errors(operation: str, *, condition_failed: type[Exception] | None = None) -> Iterator[None]:
    """Nothing above an adapter sees a ClientError: a failed condition becomes ``condition_failed``,
    any other provider failure an 8000."""
    try:
        yield
    except ClientError as error:
        if condition_failed is not None and error_code(error) == "ConditionalCheckFailedException":
            raise condition_failed() from error
        raise internal_error(operation, error) from error
    except BotoCoreError as error:
        raise internal_error(operation, error) from error
