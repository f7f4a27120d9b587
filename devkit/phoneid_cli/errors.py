"""Every failure as one line, ``phoneid: what went wrong: what to do``, with its exit code: 2 when the
command line asks for something wrong (an option, a file, a spec), 1 when what the command needs
failed (nothing answers, AWS refuses, records are rejected)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

START_LOCAL = "start it with make dev or phoneid dev"


class CommandError(Exception):
    """Printed as ``phoneid: {message}``; exit code 2 (the command line asked for something wrong)
    unless told otherwise (1: what the command needs failed)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def first_problem(error: Any) -> str:
    """The first of a pydantic ValidationError's problems: ``field: message``."""
    first = error.errors()[0]
    return f"{'.'.join(str(part) for part in first['loc']) or 'value'}: {first['msg']}"


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The error, then what it was raised from or while handling, outwards in."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def explain(error: BaseException, local_aws: str | None = None) -> tuple[int, str]:
    """Exit code and one line for a failure: the first row of the table matching the error or one of
    its causes (a domain error may wrap the AWS error that says what to check). ``local_aws``: the
    local stack's AWS endpoint when the command targeted one."""
    causes = list(_causes(error))
    for kinds, code, say in _failures(local_aws or os.environ.get("AWS_ENDPOINT_URL")):
        for cause in causes:
            if isinstance(cause, kinds):
                return code(cause) if callable(code) else code, say(cause)
    return 1, f"{type(error).__name__}: {error} (PHONEID_DEBUG=1 shows where it failed)"


def _failures(local_aws: str | None) -> list[tuple[Any, Any, Callable[[Any], str]]]:
    """(exception types, exit code, message) in order: what the operator asked for wrong (2), then
    what failed on the way (1)."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        NoRegionError,
    )
    from pydantic import ValidationError

    from phoneid.adapters.transfer import SftpProvisioningFailed
    from phoneid.domain.errors import PhoneIdError
    from phoneid.domain.policy import InvalidPolicy
    from phoneid.services.clients import InvalidClientSpec
    from phoneid.services.connect_onboarding import InvalidConnectSpec

    def unreachable(error: Any) -> str:
        url = error.kwargs.get("endpoint_url", "AWS")
        if local_aws:  # the local stack's moto
            return f"cannot reach the local stack's AWS at {url}: is the stack still running? ({START_LOCAL})"
        return f"cannot reach AWS at {url}: check the network and the region (AWS_REGION)"

    return [
        (CommandError, lambda e: e.exit_code, str),
        ((InvalidClientSpec, InvalidPolicy, InvalidConnectSpec), 2, str),
        (FileNotFoundError, 2, lambda e: f"{e.filename or e}: no such file: check the path"),
        (IsADirectoryError, 2, lambda e: f"{e.filename}: a directory, not a file"),
        (PermissionError, 2, lambda e: f"{e.filename or e}: permission denied"),
        (NoCredentialsError, 1, lambda e: _aws_credentials_missing()),
        (NoRegionError, 1, lambda e: "no AWS region: set AWS_REGION (or a profile with one: AWS_PROFILE)"),
        (EndpointConnectionError, 1, unreachable),
        (ClientError, 1, _aws_refused),
        (SftpProvisioningFailed, 1, lambda e: f"{e}: check the Transfer Family server and its role"),
        (BotoCoreError, 1, lambda e: f"AWS: {e}: check the AWS settings (AWS_PROFILE, AWS_REGION)"),
        (ValidationError, 1, lambda e: f"invalid settings or data ({first_problem(e)})"),
        (PhoneIdError, 1, lambda e: f"{e} (PHONEID_DEBUG=1 shows where it failed)"),
        (OSError, 1, lambda e: f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}"),
    ]


def _aws_credentials_missing() -> str:
    return (
        "no AWS credentials: configure them (aws configure, AWS_PROFILE or AWS_ACCESS_KEY_ID), "
        "or use --local for the local stack"
    )


def _aws_refused(error: Any) -> str:
    details = error.response.get("Error", {})
    code, said = details.get("Code", "?"), details.get("Message", "")
    if code in ("ExpiredToken", "ExpiredTokenException", "RequestExpired"):
        advice = "renew your AWS credentials (aws sso login, or new keys)"
    elif code in ("InvalidClientTokenId", "UnrecognizedClientException", "SignatureDoesNotMatch"):
        advice = "check your AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID)"
    elif "AccessDenied" in code or code in ("UnauthorizedOperation", "AuthorizationError"):
        advice = "use credentials allowed to do this (an operator role of the stack's account)"
    elif "does not exist" in said or "NotFound" in code:
        advice = "check the stack name (--stack) and the region (AWS_REGION)"
    else:
        advice = "check the stack name (--stack), the region (AWS_REGION) and your credentials"
    return f"AWS {error.operation_name} failed ({code}: {said}): {advice}"
