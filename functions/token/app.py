"""POST /token: form-encoded client credentials (or refresh token) in, access token out."""

from typing import Any

from phoneid.api.http import declares, entrypoint, make_app, parse_form, source_address
from phoneid.api.token_models import TokenResponse
from phoneid.bootstrap import container
from phoneid.domain.errors import MalformedRequest

app = make_app()


@app.post("/token", cache_control="no-store")
def token() -> TokenResponse:
    if not declares(app.current_event.raw_event, "application/x-www-form-urlencoded"):
        raise MalformedRequest("Malformed request: Content-Type must be application/x-www-form-urlencoded")
    form = parse_form(app.current_event.decoded_body)
    services = container()
    return services.auth_throttle.guard(
        form.get("client_id", ""),
        source_address(app.current_event.raw_event),
        lambda: services.tokens.grant(form),
    )


def _rate_key(event: dict[str, Any]) -> str:
    """Per client id when one is sent, else per source address."""
    try:
        client_id = parse_form(event.get("body")).get("client_id", "")
    except MalformedRequest:
        client_id = ""
    return f"token:{client_id[:128] or source_address(event)}"


handler = entrypoint(app, rate_key=_rate_key, json_body=False)
