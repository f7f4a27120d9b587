"""The stack as an integrator meets it, on moto in this process, with time in the test's hand.

Routes, tables, keys and environment come from ``template.yaml`` (through ``phoneid_dev``); requests
go through the same local API Gateway emulation as ``phoneid dev``: authorizer, gateway responses
and Lambda proxy events included.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast
from urllib.parse import parse_qsl, urlencode, urlsplit

import boto3

from phoneid import bootstrap
from phoneid_dev.events import function_context
from phoneid_dev.gateway import HttpResponse, LocalGateway
from phoneid_dev.outbox import sent_messages
from phoneid_dev.stack import LocalStack
from tests.fakes import FakeClock

EVENTS = Path(__file__).resolve().parents[1] / "events"
# Where phones and SDKs reach the API in tests: Instant Links and Mobile Auth callbacks start here.
PUBLIC_BASE_URL = "https://api.phoneid.test"

T = TypeVar("T")


@dataclass(frozen=True)
class Credentials:
    client_id: str
    client_secret: str

    def token_form(self) -> dict[str, str]:
        """The ``POST /token`` form of the client credentials grant."""
        return {
            "grant_type": "client_credentials",
            "client_id": self.client_id,
            "client_secret": self.client_secret,
        }


class Transport(Protocol):
    """How tests reach the API: in this process (``Api``) or over HTTP to ``phoneid dev``."""

    public_base_url: str

    def post(self, path: str, body: Any, *, token: str | None = None, **headers: str) -> HttpResponse: ...

    def get(self, url: str) -> HttpResponse: ...

    def token(self, credentials: Credentials) -> str: ...

    def outbox(self, to: str | None = None) -> list[dict[str, str]]: ...


class Integrator:
    """One API client: its credentials, an access token, and calls made with it."""

    def __init__(self, api: Transport, credentials: Credentials) -> None:
        self.api = api
        self.credentials = credentials
        self._token: str | None = None

    @property
    def access_token(self) -> str:
        if self._token is None:
            self._token = self.api.token(self.credentials)
        return self._token

    @property
    def client_id(self) -> str:
        return self.credentials.client_id

    def post(self, path: str, body: Any, **headers: str) -> HttpResponse:
        return self.api.post(path, body, token=self.access_token, **headers)

    def start(self, **fields: Any) -> HttpResponse:
        return self.post("/v3/start", {"flowType": "mobile", **fields})


class Api:
    public_base_url = PUBLIC_BASE_URL

    def __init__(self, stack: LocalStack, clock: FakeClock) -> None:
        self.stack = stack
        self.clock = clock
        self.gateway = LocalGateway(stack)

    @classmethod
    def on_moto(cls, parameters: dict[str, str], overrides: dict[str, str] | None = None) -> Api:
        """For a script outside pytest, with moto's mock already on: the stack provisioned, its
        environment set in this process, and the container rebuilt on a fake clock."""
        stack = LocalStack(parameters=parameters, overrides=overrides or {}).provision()
        os.environ.update(stack.environment())
        bootstrap.reset()
        api = cls(stack, FakeClock())
        bootstrap.override(clock=api.clock)
        api.rotate_token_keys()
        return api

    def rotate_token_keys(self) -> dict[str, Any]:
        """One run of the token key rotation, as its hourly schedule runs it."""
        return self.invoke("TokenKeysFunction", {})

    @property
    def container(self) -> bootstrap.Container:
        return bootstrap.container()

    def create_client(self, **spec: Any) -> Credentials:
        created = self.container.client_admin.create(**spec)
        return Credentials(created.client.client_id, created.client_secret)

    def integrator(self, **spec: Any) -> Integrator:
        return Integrator(self, self.create_client(**spec))

    def request(
        self,
        method: str,
        path: str,
        body: str | None,
        headers: dict[str, str],
        query: dict[str, str] | None = None,
    ) -> HttpResponse:
        return self.gateway.handle(method, path, headers, body, query=query, host="api.phoneid.test")

    def get(self, url: str) -> HttpResponse:
        """Open a URL of this API (a link from an SMS, a redirect) as a phone's browser would."""
        parts = urlsplit(url)
        assert url.startswith(PUBLIC_BASE_URL), url
        return self.request("GET", parts.path, None, {}, dict(parse_qsl(parts.query)))

    def outbox(self, to: str | None = None) -> list[dict[str, str]]:
        """Every SMS sent so far (Sandbox: to the Sandbox topic), oldest first."""
        return [message for message in sent_messages() if to is None or message["to"] == to]

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        query: dict[str, str] | None = None,
        **headers: str,
    ) -> HttpResponse:
        """A call with a JSON body (a string goes as it is) and a bearer token, when given."""
        text = body if isinstance(body, str) or body is None else json.dumps(body)
        sent = {"content-type": "application/json"} if text is not None else {}
        sent |= {k.replace("_", "-"): v for k, v in headers.items()}
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        return self.request(method, path, text, sent, query)

    def post(self, path: str, body: Any, *, token: str | None = None, **headers: str) -> HttpResponse:
        return self.call("POST", path, body, token=token, **{"content_type": "application/json", **headers})

    def token_response(self, fields: dict[str, str]) -> HttpResponse:
        return self.request(
            "POST", "/token", urlencode(fields), {"content-type": "application/x-www-form-urlencoded"}
        )

    def token(self, credentials: Credentials) -> str:
        response = self.token_response(credentials.token_form())
        assert response.status == 200, response.body
        return str(response.json()["access_token"])

    def table_items(self, table: str) -> list[dict[str, Any]]:
        """Every item of a table of the template (``"SessionsTable"``), raw, as DynamoDB stores it."""
        items: list[dict[str, Any]] = boto3.client("dynamodb").scan(TableName=self.stack.physical_ids[table])[
            "Items"
        ]
        return items

    def invoke(self, function: str, event: dict[str, Any]) -> dict[str, Any]:
        """Call one handler directly with an event, as Lambda would (with the function's own timeout)."""
        context = function_context(self.stack.template, function)
        result: dict[str, Any] = self.stack.invoke(function, event, context)
        return result


def load_event(name: str, replacements: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A sample event from ``events/`` (e.g. ``start/mobile.json``), each key of ``replacements``
    (a ``<PLACEHOLDER>`` or a sample id) replaced by its value."""
    text = (EVENTS / name).read_text()
    for placeholder, value in (replacements or {}).items():
        text = text.replace(placeholder, value)
    event: dict[str, Any] = json.loads(text)
    return event


class LogRecorder(logging.Handler):
    """Keeps every record whole: message, extra fields and exception text."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(
            json.dumps(record.__dict__, default=str) + (self.format(record) if record.exc_info else "")
        )


def at_once(call: Callable[[], T], times: int) -> list[T]:
    """``call`` from ``times`` threads released together; every result (a thread's exception fails here)."""
    barrier = threading.Barrier(times)
    results: list[T | BaseException | None] = [None] * times

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = call()
        except BaseException as error:  # reported below, in the test's thread
            results[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    failures = [r for r in results if isinstance(r, BaseException) or r is None]
    assert not failures, failures
    return cast(list[T], results)


def kms_calls(kms: Any) -> Counter[str]:
    """The KMS operations a client makes from now on, counted by name."""
    calls: Counter[str] = Counter()
    kms.meta.events.register("before-call.kms.*", lambda model, **_: calls.update([model.name]))
    return calls
