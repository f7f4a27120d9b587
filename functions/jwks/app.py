"""GET /.well-known/jwks.json: the public keys that verify access tokens and authTokens."""

from typing import Any

from phoneid.api.http import entrypoint, make_app, source_address
from phoneid.bootstrap import container

app = make_app()


@app.get("/.well-known/jwks.json", cache_control="public, max-age=300")
def jwks() -> dict[str, Any]:
    return container().tokens.jwks()


def _rate_key(event: dict[str, Any]) -> str:
    return f"jwks:{source_address(event)}"


handler = entrypoint(app, rate_key=_rate_key, json_body=False)
