"""Files of the repository the local stack serves as they are: the web SDK (with the demo page
beside it), the OpenAPI document and Redoc's bundle for the API reference."""

from __future__ import annotations

from pathlib import Path

from phoneid_dev.template import repository_root


def web_client() -> Path:
    """``clients/web``: the web SDK, served at ``/sdk``; its ``demo/`` at ``/demo``."""
    return repository_root() / "clients" / "web"


def openapi_path() -> Path:
    """The committed OpenAPI document, ``docs/openapi.json`` (``phoneid_dev.openapi`` writes it)."""
    return repository_root() / "docs" / "openapi.json"


def redoc_bundle() -> Path:
    """Redoc's standalone bundle, installed by ``npm ci`` (which ``make dev`` runs)."""
    return repository_root() / "node_modules" / "redoc" / "bundles" / "redoc.standalone.js"
