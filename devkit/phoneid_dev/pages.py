"""The local stack's own pages: its root (where everything is), the OpenAPI document and its reference.

``/docs`` renders ``/openapi.json`` with Redoc's standalone bundle from ``node_modules`` (``npm ci``,
which ``make dev`` runs); nothing on these pages is fetched from anywhere but the stack itself.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from phoneid_dev.static import openapi_path, redoc_bundle

if TYPE_CHECKING:  # the type only: the stack imports nothing of the pages
    from phoneid_dev.devstack import DevStack

BUNDLE_PATH = "/docs/redoc.standalone.js"

# Redoc's side menu shows its maker's logo from their CDN, whatever the options say (hideLogo is the
# spec's x-logo): the bundle is served with that image made an empty inline one, so the page asks
# nothing of elsewhere and the policy below has nothing to refuse (a console error each visit).
REDOC_CDN_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_IMAGE = b"data:image/svg+xml,%3Csvg xmlns=%27http://www.w3.org/2000/svg%27/%3E"

# The browser refuses anything not from the stack. Styles are inline (styled-components) and search
# runs in a blob worker.
DOCS_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
PAGE_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
)

# An empty icon: otherwise the browser asks the API (the gateway emulation) for /favicon.ico, a 403.
_HEAD = (
    '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
    '<link rel="icon" href="data:,">'
)

_STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1c2330}"
    "th{text-align:left;padding-right:1.5rem;vertical-align:top;white-space:nowrap}"
    "td{padding:.2rem 0}code{font-size:.95em}"
)


def local_facts(dev: DevStack) -> dict[str, Any]:
    """Where things are on this stack: what the start-up banner says, as data."""
    base = dev.base_url
    return {
        "tier": dev.tier,
        "region": dev.region,
        "apiBaseUrl": base,
        "demo": f"{base}/demo/",
        "console": f"{base}/console",
        "docs": f"{base}/docs",
        "openapi": f"{base}/openapi.json",
        "outbox": f"{base}/_local/outbox",
        "sdk": f"{base}/sdk/phoneid.js",
        "connectTransport": dev.connect_transport.value,
        "sftp": {"host": dev.sftp.host, "port": dev.sftp.port} if dev.sftp is not None else None,
        "awsEndpointUrl": dev.moto.endpoint_url,
    }


def _link(url: str) -> str:
    return f'<a href="{html.escape(url)}">{html.escape(url)}</a>'


def _connect_row(facts: dict[str, Any]) -> tuple[str, str]:
    """How Connect clients send files on this stack (its ConnectTransport)."""
    sftp = facts["sftp"]
    if sftp:
        return (
            "SFTP (Connect)",
            f"<code>sftp -P {int(sftp['port'])} CLIENT_NAME@{html.escape(sftp['host'])}</code>",
        )
    if facts["connectTransport"] == "s3":
        return (
            "Connect (s3)",
            "each file PUT to its URL: <code>phoneid connect upload-url CLIENT_ID FILE --local</code>",
        )
    return "Connect (none)", "no client transport: <code>phoneid connect submit FILE --local</code>"


def root_page(facts: dict[str, Any]) -> str:
    rows = [
        ("API", f"{_link(facts['apiBaseUrl'])} (token: <code>POST /token</code>)"),
        ("Demo", _link(facts["demo"])),
        ("Console", f"{_link(facts['console'])} (requests, flows, messages, batches and webhooks, live)"),
        ("API reference", _link(facts["docs"])),
        ("OpenAPI document", _link(facts["openapi"])),
        ("Outbox", f"{_link(facts['outbox'])} (every SMS and email; also printed in the terminal)"),
        ("Web SDK", _link(facts["sdk"])),
        _connect_row(facts),
        ("AWS (moto)", f"<code>AWS_ENDPOINT_URL={html.escape(facts['awsEndpointUrl'])}</code>"),
    ]
    table = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in rows)
    title = f"PhoneID local stack ({html.escape(facts['tier'])}, {html.escape(facts['region'])})"
    return (
        f'<!doctype html><html lang="en"><head>{_HEAD}<title>{title}</title><style>{_STYLE}</style></head>'
        f"<body><h1>{title}</h1><table>{table}</table>"
        "<p>The same facts as JSON: <code>curl -H 'Accept: application/json' "
        f"{html.escape(facts['apiBaseUrl'])}/</code></p></body></html>\n"
    )


def docs_page() -> str:
    return (
        f'<!doctype html><html lang="en"><head>{_HEAD}<title>PhoneID API reference</title>'
        "<style>body{margin:0}</style></head>"
        f'<body><redoc spec-url="/openapi.json"></redoc><script src="{BUNDLE_PATH}"></script>'
        "</body></html>\n"
    )


def docs_missing_page() -> str:
    return (
        f'<!doctype html><html lang="en"><head>{_HEAD}<title>PhoneID API reference</title>'
        f"<style>{_STYLE}</style></head><body><h1>The API reference needs Redoc</h1>"
        "<p>Redoc is installed with the project's npm packages: run <code>make dev</code> (or "
        "<code>npm ci</code>) in the repository, then reload this page.</p>"
        '<p>The OpenAPI document itself is at <a href="/openapi.json">/openapi.json</a>.</p>'
        "</body></html>\n"
    )


def _wants_json(accept: str) -> bool:
    return "application/json" in accept and "text/html" not in accept


def page_routes(dev: DevStack, bundle: Path | None = None) -> list[BaseRoute]:
    """Exact paths only: every other path (``POST /`` too) stays with the API gateway emulation.
    ``bundle``: Redoc's (default: the repository's ``node_modules``)."""
    return LocalPages(dev, redoc_bundle() if bundle is None else bundle).routes()


class LocalPages:
    def __init__(self, dev: DevStack, bundle: Path) -> None:
        self._dev = dev
        self._bundle = bundle
        self._document = openapi_path()
        self._served_bundle: bytes | None = None

    def routes(self) -> list[BaseRoute]:
        # Starlette answers HEAD wherever GET is allowed.
        return [
            Route("/", self.root, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route("/docs", self.docs, methods=["GET"]),
            Route(BUNDLE_PATH, self.redoc, methods=["GET"]),
        ]

    async def root(self, request: Request) -> Response:
        facts = local_facts(self._dev)
        if _wants_json(request.headers.get("accept", "")):
            return JSONResponse(facts)
        return HTMLResponse(root_page(facts), headers={"Content-Security-Policy": PAGE_POLICY})

    async def openapi(self, request: Request) -> Response:
        return FileResponse(self._document, media_type="application/json")

    async def docs(self, request: Request) -> Response:
        if not self._bundle.is_file():  # no `npm ci` yet: say so rather than fail
            return HTMLResponse(docs_missing_page(), headers={"Content-Security-Policy": PAGE_POLICY})
        return HTMLResponse(docs_page(), headers={"Content-Security-Policy": DOCS_POLICY})

    async def redoc(self, request: Request) -> Response:
        if not self._bundle.is_file():
            return PlainTextResponse("Redoc is not installed: run `make dev` or `npm ci`", status_code=404)
        if self._served_bundle is None:  # read once: about 1 MB
            self._served_bundle = self._bundle.read_bytes().replace(REDOC_CDN_LOGO, EMPTY_IMAGE)
        return Response(self._served_bundle, media_type="text/javascript")
