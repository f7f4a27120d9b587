"""The console's Decisions panel: one client's decision records, read through the service the API
answers ``/v3/decisions`` with (``phoneid.services.decisions.DecisionBook``) as that client's
``Caller``, so that the page shows what the client's own calls would get, errors included.

A record holds nothing personal (the number only as its country and last two digits); a number the
operator types reaches the stack only in a search's body, to be looked up, and is never kept or
echoed (docs/adr/0105-a-console-fed-by-what-the-stack-already-sees.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from phoneid.api import errors
from phoneid.domain.clients import Caller
from phoneid.domain.errors import MalformedRequest, PhoneIdError
from phoneid.ports import ClientStore
from phoneid.services.decisions import DecisionBook

PAGE = 25
# A sparse search (one number among many records) may answer short or empty pages with a lastKey:
# the console reads on, at most this many pages, before it shows what it found and offers more.
MAX_READS = 10
# The API's own bounds on these parameters (phoneid.api.decision_models, functions/decisions_*).
MAX_NUMBER = 32
MAX_START_KEY = 1024
MAX_ID = 256
MAX_BODY = 4096

Answer = tuple[int, dict[str, Any]]


class UnknownClient(Exception):
    pass


class ConsoleDecisions:
    """``clients``: the stack's client store; ``book``: the decision service; ``roles``: what the
    stack made its own clients for (client id -> "banner", "demo"), to name them."""

    def __init__(
        self,
        clients: Callable[[], ClientStore],
        book: Callable[[], DecisionBook],
        roles: Callable[[], Mapping[str, str]] = dict,
        page: int = PAGE,
    ) -> None:
        self._clients = clients
        self._book = book
        self._roles = roles
        self._page = page

    def clients(self) -> list[dict[str, Any]]:
        """The stack's clients, newest first: id, name, what the stack made it for, solution, tier."""
        roles = self._roles()
        return [
            {
                "clientId": client.client_id,
                "name": client.name,
                "role": roles.get(client.client_id),
                "solution": client.solution.value,
                "tier": client.tier,
                "enabled": client.enabled,
            }
            for client in reversed(self._clients().list())
        ]

    def search(
        self, client_id: str, *, phone_number: str | None = None, start_key: str | None = None
    ) -> Answer:
        """The client's latest decisions, or those of ``phone_number``: as ``GET /v3/decisions``
        answers, read on over sparse pages until a page's worth is found or ``MAX_READS`` pages."""

        def read(caller: Caller) -> dict[str, Any]:
            _bounded(phoneNumber=(phone_number, MAX_NUMBER), startKey=(start_key, MAX_START_KEY))
            found: list[dict[str, Any]] = []
            key = start_key
            for _ in range(MAX_READS):
                page = self._book().list_page(
                    caller,
                    since=None,
                    until=None,
                    phone_number=phone_number,
                    kind=None,
                    outcome=None,
                    reason=None,
                    client_request_id=None,
                    limit=self._page - len(found),
                    start_key=key,
                )
                found.extend(item.model_dump(exclude_none=True) for item in page.results)
                key = page.lastKey
                if key is None or len(found) >= self._page:
                    break
            return {"results": found, **({"lastKey": key} if key else {})}

        return self._answer(client_id, read)

    def view(self, client_id: str, decision_id: str) -> Answer:
        """One decision whole, as ``GET /v3/decisions/{id}`` answers it (404/8011 when unknown)."""

        def read(caller: Caller) -> dict[str, Any]:
            _bounded(id=(decision_id, MAX_ID))
            if not decision_id:
                raise MalformedRequest(problems={"id": "is required"})
            return self._book().get(caller, decision_id).model_dump(exclude_none=True)

        return self._answer(client_id, read)

    def summary(self, client_id: str, *, first: str | None, last: str | None) -> Answer:
        """The client's days counted, as ``GET /v3/decisions/summary`` answers them."""

        def read(caller: Caller) -> dict[str, Any]:
            _bounded(**{"from": (first, 10), "to": (last, 10)})
            return self._book().summary(caller, first=first, last=last).model_dump(exclude_none=True)

        return self._answer(client_id, read)

    def _answer(self, client_id: str, read: Callable[[Caller], dict[str, Any]]) -> Answer:
        client = self._clients().get(client_id) if client_id else None
        if client is None:
            return 404, {"message": "No such client on this stack: choose one of the list"}
        try:
            return 200, read(client.as_caller())
        except PhoneIdError as error:
            return error.http_status, errors.error_body(error, {})


def _bounded(**values: tuple[str | None, int]) -> None:
    """8001 for a parameter longer than the API takes, as the API refuses it."""
    problems = {
        name: f"must be at most {most} characters"
        for name, (value, most) in values.items()
        if value is not None and len(value) > most
    }
    if problems:
        raise MalformedRequest(problems=problems)


class DecisionRoutes:
    """``GET /_local/console/clients``; ``POST /_local/console/decisions/search`` with ``{client,
    phoneNumber?, startKey?}`` (a number in a body, never in a URL); ``GET
    /_local/console/decisions/one?client=&id=``; ``GET
    /_local/console/decisions/summary?client=&from=&to=``."""

    def __init__(self, decisions: ConsoleDecisions) -> None:
        self._decisions = decisions

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/_local/console/clients", self.clients, methods=["GET"]),
            Route("/_local/console/decisions/search", self.search, methods=["POST"]),
            Route("/_local/console/decisions/one", self.one, methods=["GET"]),
            Route("/_local/console/decisions/summary", self.summary, methods=["GET"]),
        ]

    async def clients(self, request: Request) -> Response:
        return _json(200, {"clients": await run_in_threadpool(self._decisions.clients)})

    async def search(self, request: Request) -> Response:
        body = await request.body()
        asked = _object(body) if len(body) <= MAX_BODY else None
        if asked is None:
            return _json(400, errors.error_body(MalformedRequest("Malformed request: a JSON object"), {}))
        fields = {name: asked.get(name) for name in ("client", "phoneNumber", "startKey")}
        wrong = {
            name: "must be a string" for name, value in fields.items() if not isinstance(value, str | None)
        }
        if wrong:
            return _json(400, errors.error_body(MalformedRequest(problems=wrong), {}))
        status, answer = await run_in_threadpool(
            lambda: self._decisions.search(
                fields["client"] or "",
                phone_number=(fields["phoneNumber"] or "").strip() or None,
                start_key=fields["startKey"] or None,
            )
        )
        return _json(status, answer)

    async def one(self, request: Request) -> Response:
        query = request.query_params
        status, answer = await run_in_threadpool(
            self._decisions.view, query.get("client", ""), query.get("id", "").strip()
        )
        return _json(status, answer)

    async def summary(self, request: Request) -> Response:
        query = request.query_params
        status, answer = await run_in_threadpool(
            lambda: self._decisions.summary(
                query.get("client", ""), first=query.get("from") or None, last=query.get("to") or None
            )
        )
        return _json(status, answer)


def _object(body: bytes) -> dict[str, Any] | None:
    try:
        found = json.loads(body)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _json(status: int, answer: dict[str, Any]) -> Response:
    return JSONResponse(answer, status_code=status, headers={"Cache-Control": "no-store"})
