"""The local stack's own pages over real HTTP: its root, the OpenAPI document and the API reference."""

from __future__ import annotations

import json

import httpx
import pytest

from phoneid_dev.openapi import openapi_path
from phoneid_dev.pages import EMPTY_IMAGE, REDOC_CDN_LOGO
from phoneid_dev.static import redoc_bundle
from tests.e2e.conftest import DevServer

pytestmark = pytest.mark.e2e


def test_the_root_page_says_where_everything_is(dev_server: DevServer, http: httpx.Client) -> None:
    # Given what the running stack wrote down for other processes
    state = json.loads(dev_server.state_file.read_text())
    base = dev_server.base_url

    # When a person opens the root in a browser
    page = http.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})

    # Then it is a page linking to everything, with how Connect files come (the default transport,
    # s3: a URL per file) and the AWS address
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    for path in ("/demo/", "/console", "/docs", "/openapi.json", "/_local/outbox"):
        assert f'href="{base}{path}"' in page.text
    assert "phoneid connect upload-url CLIENT_ID FILE --local" in page.text
    assert f"AWS_ENDPOINT_URL={state['awsEndpointUrl']}" in page.text


def test_the_root_gives_the_same_facts_as_json(dev_server: DevServer, http: httpx.Client) -> None:
    state = json.loads(dev_server.state_file.read_text())
    base = dev_server.base_url

    facts = http.get("/", headers={"Accept": "application/json"})

    assert facts.status_code == 200
    assert facts.json() == {
        "tier": "sandbox",
        "region": "US",
        "apiBaseUrl": base,
        "demo": f"{base}/demo/",
        "console": f"{base}/console",
        "docs": f"{base}/docs",
        "openapi": f"{base}/openapi.json",
        "outbox": f"{base}/_local/outbox",
        "sdk": f"{base}/sdk/phoneid.js",
        "connectTransport": "s3",
        "sftp": None,
        "awsEndpointUrl": state["awsEndpointUrl"],
    }


def test_only_the_root_itself_is_the_page(http: httpx.Client) -> None:
    # HEAD is the page too; any other method, like any unknown path, is API Gateway's answer
    assert http.head("/").status_code == 200
    posted = http.post("/", json={})
    assert posted.status_code == 403
    assert posted.json()["code"] == 8001


def test_the_openapi_document_is_served_as_committed(http: httpx.Client) -> None:
    served = http.get("/openapi.json")

    assert served.status_code == 200
    assert served.headers["content-type"].startswith("application/json")
    assert served.content == openapi_path().read_bytes()


def test_the_api_reference_is_redoc_from_node_modules(http: httpx.Client) -> None:
    page = http.get("/docs")
    bundle = http.get("/docs/redoc.standalone.js")

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<script src="/docs/redoc.standalone.js"></script>' in page.text
    assert 'spec-url="/openapi.json"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert bundle.status_code == 200
    # Redoc's own bundle, but for its maker's CDN logo, made an inline image (nothing from elsewhere)
    installed = redoc_bundle().read_bytes()
    assert b"https://cdn.redoc.ly/" in installed
    assert bundle.content == installed.replace(REDOC_CDN_LOGO, EMPTY_IMAGE)
    assert b"https://cdn.redoc.ly/" not in bundle.content


def test_the_banner_names_the_console_which_serves_its_page_its_files_and_its_feed(
    dev_server: DevServer, http: httpx.Client
) -> None:
    # Given the line the banner prints for the console
    assert f"  console        {dev_server.base_url}/console   (" in dev_server.output()

    # When a browser opens it
    page = http.get("/console")
    script = http.get("/console/console.js")
    feed = http.get("/_local/console/feed")

    # Then the page loads its own script and style only, may ask only the stack, and polls a feed
    # holding every panel's data
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "connect-src 'self'" in policy
    assert "default-src 'none'" in policy
    assert '<script src="/console/console.js"></script>' in page.text
    assert "https://" not in page.text
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "/_local/console/feed" in script.text
    assert http.get("/console/secrets.txt").status_code == 404
    assert feed.status_code == 200
    assert set(feed.json()) >= {"requests", "flows", "messages", "batches", "webhooks", "today"}
    # And its Decisions panel's script, which lists the stack's clients, the banner's named so
    decisions = http.get("/console/decisions.js")
    clients = http.get("/_local/console/clients").json()["clients"]
    assert '<script src="/console/decisions.js"></script>' in page.text
    assert decisions.status_code == 200
    assert "/_local/console/decisions/search" in decisions.text
    assert "banner" in [client["role"] for client in clients]
