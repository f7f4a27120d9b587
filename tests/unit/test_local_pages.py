"""The local stack's root and reference pages, served from a stack's facts (no stack started here)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from phoneid.domain.connect import ConnectTransport
from phoneid_dev.pages import page_routes

BASE = "http://127.0.0.1:3000"
DEV: Any = SimpleNamespace(
    base_url=BASE,
    tier="sandbox",
    region="US",
    moto=SimpleNamespace(endpoint_url="http://127.0.0.1:45001"),
    connect_transport=ConnectTransport.SFTP,
    sftp=SimpleNamespace(host="127.0.0.1", port=2222),
)


async def _gateway(request: Any) -> PlainTextResponse:
    return PlainTextResponse(f"gateway {request.method} {request.url.path}")


class Client:
    """The pages' routes in front of a stand-in for the gateway emulation, called in-process."""

    def __init__(self, bundle: Path, dev: Any = DEV) -> None:
        routes = [*page_routes(dev, bundle=bundle), Route("/{path:path}", _gateway, methods=["GET", "POST"])]
        self.app = Starlette(routes=routes)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async def send() -> httpx.Response:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url=BASE) as http:
                return await http.request(method, path, **kwargs)

        return asyncio.run(send())

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)


@pytest.fixture
def client(tmp_path: Path) -> Client:
    bundle = tmp_path / "redoc.standalone.js"
    bundle.write_text("/* redoc */")
    return Client(bundle)


def test_the_root_page_says_where_everything_is(client: Client) -> None:
    page = client.get("/", headers={"Accept": "text/html,*/*"})

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    for shown in (
        f'href="{BASE}/demo/"',
        f'href="{BASE}/console"',
        f'href="{BASE}/docs"',
        f'href="{BASE}/openapi.json"',
        f'href="{BASE}/_local/outbox"',
        "sftp -P 2222 CLIENT_NAME@127.0.0.1",
        "AWS_ENDPOINT_URL=http://127.0.0.1:45001",
        "(sandbox, US)",
    ):
        assert shown in page.text
    assert "https://" not in page.text  # nothing to fetch from elsewhere


def test_the_root_answers_json_to_who_asks_for_it(client: Client) -> None:
    answer = client.get("/", headers={"Accept": "application/json"})

    assert answer.status_code == 200
    assert answer.json() == {
        "tier": "sandbox",
        "region": "US",
        "apiBaseUrl": BASE,
        "demo": f"{BASE}/demo/",
        "console": f"{BASE}/console",
        "docs": f"{BASE}/docs",
        "openapi": f"{BASE}/openapi.json",
        "outbox": f"{BASE}/_local/outbox",
        "sdk": f"{BASE}/sdk/phoneid.js",
        "connectTransport": "sftp",
        "sftp": {"host": "127.0.0.1", "port": 2222},
        "awsEndpointUrl": "http://127.0.0.1:45001",
    }


@pytest.mark.parametrize(
    ("transport", "shown"),
    [
        (ConnectTransport.S3, "phoneid connect upload-url CLIENT_ID FILE --local"),
        (ConnectTransport.NONE, "no client transport: <code>phoneid connect submit FILE --local"),
    ],
)
def test_without_sftp_the_root_says_how_connect_files_come_instead(
    tmp_path: Path, transport: ConnectTransport, shown: str
) -> None:
    # Given a stack whose Connect transport is not SFTP: no SFTP server runs
    bundle = tmp_path / "redoc.standalone.js"
    bundle.write_text("/* redoc */")
    client = Client(bundle, SimpleNamespace(**{**vars(DEV), "connect_transport": transport, "sftp": None}))

    page = client.get("/", headers={"Accept": "text/html"})
    facts = client.get("/", headers={"Accept": "application/json"}).json()

    # Then the page shows that transport's way in, and no SFTP address
    assert f"Connect ({transport.value})" in page.text
    assert shown in page.text
    assert "sftp -P" not in page.text
    assert (facts["connectTransport"], facts["sftp"]) == (transport.value, None)


def test_only_get_and_head_of_the_root_are_the_page(client: Client) -> None:
    assert client.request("HEAD", "/").status_code == 200
    assert client.request("POST", "/").text == "gateway POST /"
    assert client.get("/v3/start").text == "gateway GET /v3/start"


def test_the_reference_page_loads_the_local_bundle_under_a_policy_that_keeps_it_local(
    client: Client,
) -> None:
    page = client.get("/docs")
    bundle = client.get("/docs/redoc.standalone.js")

    assert page.status_code == 200
    assert '<script src="/docs/redoc.standalone.js">' in page.text
    assert 'spec-url="/openapi.json"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert bundle.status_code == 200
    assert bundle.text == "/* redoc */"


def test_the_bundle_is_served_without_its_makers_logo_from_their_cdn(tmp_path: Path) -> None:
    # Given Redoc's bundle, whose side menu shows a logo from cdn.redoc.ly
    bundle = tmp_path / "redoc.standalone.js"
    bundle.write_text(
        'n.createElement("img",{alt:"redocly logo",src:"https://cdn.redoc.ly/redoc/logo-mini.svg"})'
    )

    # When the browser asks for it
    served = Client(bundle).get("/docs/redoc.standalone.js")

    # Then the image is an inline one the page's policy allows: nothing is asked of elsewhere
    assert served.status_code == 200
    assert "cdn.redoc.ly" not in served.text
    assert 'src:"data:image/svg+xml,' in served.text


def test_without_npm_packages_the_reference_page_says_how_to_get_them(tmp_path: Path) -> None:
    client = Client(tmp_path / "absent.js")
    page = client.get("/docs")
    bundle = client.get("/docs/redoc.standalone.js")

    assert page.status_code == 200
    assert "make dev" in page.text
    assert "npm ci" in page.text
    assert "<script" not in page.text
    assert bundle.status_code == 404
