"""AWS misbehaving on purpose: record every botocore call a request makes, and make one of them fail once.

Two layers, because botocore's retries sit between them:

- ``Layer.API`` raises from ``BaseClient._make_api_call``, above botocore's retry loop: what the code
  sees when every attempt failed (or, for a timeout, when the attempts ran out). It tests the error
  mapper and whatever state the half-done request left behind.
- ``Layer.HTTP`` fails one attempt in ``Endpoint._do_get_response``, inside the retry loop and before
  moto answers: the client's own retry (standard mode) repeats the attempt, and the caller should
  never notice. Backoff sleeps are recorded, not slept. ``Fault.LOST_ANSWER`` lets that attempt
  reach moto, which applies it, and then times out reading its answer: the retry repeats a call
  that was done.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import botocore.client
import botocore.endpoint
from botocore.awsrequest import AWSResponse, HTTPHeaders
from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError


class Fault(enum.Enum):
    THROTTLE = "throttle"
    SERVER = "5xx"
    TIMEOUT = "timeout"
    LOST_ANSWER = "lost-answer"  # HTTP layer only: applied by the service, its answer timed out


class Layer(enum.Enum):
    API = "api"
    HTTP = "http"


# What each service calls its throttling error; the rest use ThrottlingException.
_THROTTLE_CODES = {"dynamodb": "ProvisionedThroughputExceededException"}
_SERVER_CODES = {"dynamodb": "InternalServerError", "sns": "InternalError"}


def throttle_code(service: str) -> str:
    return _THROTTLE_CODES.get(service, "ThrottlingException")


def server_code(service: str) -> str:
    return _SERVER_CODES.get(service, "ServiceUnavailable")


@dataclass(frozen=True)
class Call:
    service: str  # botocore's endpoint prefix: "dynamodb", "kms", "sns", "execute-api"...
    operation: str  # "UpdateItem"

    def __str__(self) -> str:
        return f"{self.service}.{self.operation}"


@dataclass
class Injector:
    """Records calls while ``recording``; fails the ``fail_at``-th call (0-based) once with ``fault``."""

    recording: bool = False
    calls: list[Call] = field(default_factory=list)
    fail_at: int | None = None
    fault: Fault = Fault.SERVER
    layer: Layer = Layer.API
    injected: Call | None = None
    slept: list[float] = field(default_factory=list)

    @contextmanager
    def record(self) -> Iterator[list[Call]]:
        self.calls, self.recording = [], True
        try:
            yield self.calls
        finally:
            self.recording = False

    @contextmanager
    def failing(self, index: int, fault: Fault, layer: Layer) -> Iterator[None]:
        """Fail the ``index``-th AWS call made inside the block, once."""
        self.fail_at, self.fault, self.layer, self.injected = index, fault, layer, None
        with self.record():
            try:
                yield
            finally:
                self.fail_at = None

    # --- the two layers -----------------------------------------------------------------------

    def _due(self, call: Call) -> bool:
        """Counts a call; whether it is the one to fail (once)."""
        if not self.recording:
            return False
        self.calls.append(call)
        if self.fail_at is not None and self.injected is None and len(self.calls) - 1 == self.fail_at:
            self.injected = call
            return True
        return False

    def api_call(self, client: Any, operation: str, params: Any, original: Any) -> Any:
        call = Call(client.meta.service_model.endpoint_prefix, operation)
        if self._due(call) and self.layer is Layer.API:
            raise _api_error(call, self.fault, client.meta.endpoint_url)
        return original(client, operation, params)

    def http_attempt(self, endpoint: Any, request: Any, operation_model: Any) -> Any | None:
        """The attempt's result when it is to fail, in ``_do_get_response``'s shape; None otherwise."""
        call = self.injected
        if self.layer is not Layer.HTTP or call is None or getattr(self, "_http_done", None) is call:
            return None
        if operation_model.name != call.operation:
            return None
        self._http_done = call  # the first attempt of the chosen call, and only it
        if self.fault in (Fault.TIMEOUT, Fault.LOST_ANSWER):
            return None, ReadTimeoutError(endpoint_url=request.url)
        status, code = (
            (400, throttle_code(call.service))
            if self.fault is Fault.THROTTLE
            else (503, server_code(call.service))
        )
        raw = _Raw(b"")
        response = AWSResponse(request.url, status, HTTPHeaders(), raw)
        parsed = {
            "Error": {"Code": code, "Message": "injected"},
            "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": {}, "MaxAttemptsReached": False},
        }
        return (response, parsed), None


class _Raw:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


def _api_error(call: Call, fault: Fault, endpoint_url: str) -> Exception:
    if fault is Fault.TIMEOUT:
        return ReadTimeoutError(endpoint_url=endpoint_url)
    code = throttle_code(call.service) if fault is Fault.THROTTLE else server_code(call.service)
    status = 400 if fault is Fault.THROTTLE else 503
    response: Any = {
        "Error": {"Code": code, "Message": "injected"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, call.operation)


def connect_timeout(endpoint_url: str) -> ConnectTimeoutError:
    return ConnectTimeoutError(endpoint_url=endpoint_url)


@contextmanager
def installed(monkeypatch: Any) -> Iterator[Injector]:
    """An injector wired into botocore for the test's duration (``monkeypatch`` undoes it)."""
    injector = Injector()
    # Private botocore methods, as bench/connect.py --profile patches them (bench/connect_bench/profiling.py):
    # the narrowest seams.
    make_api_call = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]
    do_get_response = botocore.endpoint.Endpoint._do_get_response  # type: ignore[attr-defined]

    def api_call(client: Any, operation: str, params: Any) -> Any:
        return injector.api_call(client, operation, params, make_api_call)

    def attempt(endpoint: Any, request: Any, operation_model: Any, context: Any) -> Any:
        failed = injector.http_attempt(endpoint, request, operation_model)
        if failed is not None:
            if injector.fault is Fault.LOST_ANSWER:  # the service gets it and applies it
                do_get_response(endpoint, request, operation_model, context)
            return failed
        return do_get_response(endpoint, request, operation_model, context)

    class _Time:
        @staticmethod
        def sleep(seconds: float) -> None:
            injector.slept.append(seconds)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", api_call)
    monkeypatch.setattr(botocore.endpoint.Endpoint, "_do_get_response", attempt)
    monkeypatch.setattr(botocore.endpoint, "time", _Time)
    yield injector
