"""The console's routes: the page at ``/console`` (plain HTML, CSS and JS beside this module, under a
policy that lets it reach nothing but the stack), the JSON feed it polls, ``/_local/console/feed``
(docs/adr/0105-a-console-fed-by-what-the-stack-already-sees.md), and the Decisions panel's
(``phoneid_dev.console_page.decisions``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from phoneid.domain.connect import Batch
from phoneid.domain.reasons import REASONS, describe
from phoneid_dev.console_page.decisions import ConsoleDecisions, DecisionRoutes
from phoneid_dev.console_page.feed import ConsoleFeed
from phoneid_dev.console_page.panels import WebhookAttempts, batch_row, messages

STATIC = Path(__file__).parent / "static"
FILES = {"console.js": "text/javascript", "decisions.js": "text/javascript", "console.css": "text/css"}

# Its own script and style, and requests to the stack only.
CONSOLE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
MAX_BATCHES = 20
# What each reason code means, for the page to name the codes it shows.
REASON_TEXT = {str(code): describe(code) for code in REASONS}


class ConsoleSources:
    """Where the feed's panels read: the outbox, the Connect batches with their finished chunks, and
    the webhook attempts; and where the Decisions panel reads, when the console has one."""

    def __init__(
        self,
        feed: ConsoleFeed,
        sent: Callable[[], list[dict[str, str]]],
        batches: Callable[[], list[Batch]],
        chunks_done: Callable[[Batch], int],
        webhooks: WebhookAttempts,
        decisions: ConsoleDecisions | None = None,
    ) -> None:
        self.feed = feed
        self._sent = sent
        self._batches = batches
        self._chunks_done = chunks_done
        self.webhooks = webhooks
        self.decisions = decisions

    def snapshot(self, after: int) -> dict[str, Any]:
        """Everything the page shows; of the requests only those after sequence number ``after``."""
        batches = [batch_row(batch, self._chunks_done(batch)) for batch in self._batches()[:MAX_BATCHES]]
        today = self.feed.today()
        return {
            "requests": self.feed.requests(after),
            "flows": self.feed.flows(),
            "messages": messages(self._sent()),
            "batches": batches,
            "webhooks": self.webhooks.deliveries(),
            "today": {**today, "connect": _connect_day(today["date"], batches)},
            "reasonText": REASON_TEXT,
        }


def _connect_day(date: str, batches: list[dict[str, Any]]) -> dict[str, Any]:
    """The Connect rows of the day's batches: passed, failed, and the failures' reason codes."""
    day = [batch for batch in batches if batch["createdAt"].startswith(date)]
    by_reason: dict[str, int] = {}
    for batch in day:
        for code, n in batch["reasons"].items():
            by_reason[code] = by_reason.get(code, 0) + n
    return {
        "passed": sum(batch["passed"] for batch in day),
        "failed": sum(batch["failed"] for batch in day),
        "byReason": dict(sorted(by_reason.items())),
    }


class ConsoleRoutes:
    def __init__(self, sources: ConsoleSources) -> None:
        self._sources = sources

    def routes(self) -> list[BaseRoute]:
        decisions = getattr(self._sources, "decisions", None)  # a test's sources may have none
        return [
            Route("/console", self.page, methods=["GET"]),
            Route("/console/{name}", self.file, methods=["GET"]),
            Route("/_local/console/feed", self.feed, methods=["GET"]),
            *(DecisionRoutes(decisions).routes() if decisions is not None else []),
        ]

    async def page(self, request: Request) -> Response:
        return FileResponse(
            STATIC / "console.html",
            media_type="text/html",
            headers={"Content-Security-Policy": CONSOLE_POLICY, "Cache-Control": "no-store"},
        )

    async def file(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in FILES:
            return JSONResponse({"message": f"no console file {name}"}, status_code=404)
        return FileResponse(STATIC / name, media_type=FILES[name], headers={"Cache-Control": "no-store"})

    async def feed(self, request: Request) -> Response:
        after = request.query_params.get("after", "0")
        # ASCII digits, and few: int() refuses '²' (a digit to str.isdigit) and 4,300 digits or more
        seen = int(after) if after.isascii() and after.isdigit() and len(after) <= 18 else 0
        snapshot = await run_in_threadpool(self._sources.snapshot, seen)
        return JSONResponse(snapshot, headers={"Cache-Control": "no-store"})
