"""boto3 plumbing shared by the AWS adapters: clients made once, provider errors translated."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from phoneid.domain.errors import InternalError

_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=2, read_timeout=5)


def new_client(service: str, endpoint_url: str | None = None) -> Any:
    """A client for ``service``. The bootstrap container makes one per service, on first use."""
    if endpoint_url:
        return boto3.client(service, config=_CONFIG, endpoint_url=endpoint_url)  # type: ignore[call-overload]
    return boto3.client(service, config=_CONFIG)  # type: ignore[call-overload]


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
        raise InternalError(f"Internal error during {operation}; retry the request") from error
    except BotoCoreError as error:
        raise InternalError(f"Internal error during {operation}; retry the request") from error
