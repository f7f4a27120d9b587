"""GET /client/v1/mobile-auth/callback: the operator's redirect after network authentication."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query

from phoneid.api.client_models import ClientSession
from phoneid.api.http import entrypoint, make_app, public_base_url, source_address
from phoneid.bootstrap import container

app = make_app(browser=True)


@app.get("/client/v1/mobile-auth/callback")
def callback(
    state: Annotated[str, Query(min_length=16, max_length=256)],
    code: Annotated[str | None, Query(max_length=2048)] = None,
    error: Annotated[str | None, Query(max_length=256)] = None,
) -> ClientSession:
    # An operator's ``error`` (e.g. not on a mobile network) means no code: Mobile Auth failed.
    redirect_uri = f"{public_base_url(app)}/client/v1/mobile-auth/callback"
    return container().possession.mobile_auth_callback(state, None if error else code, redirect_uri)


def _rate_key(event: dict[str, Any]) -> str:
    return f"callback:{source_address(event)}"


handler = entrypoint(app, rate_key=_rate_key, json_body=False, browser=True)
