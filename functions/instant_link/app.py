"""GET /l/{token}: the customer opened the Instant Link on the phone."""

from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types

from phoneid.api.http import entrypoint, make_app, source_address
from phoneid.bootstrap import container
from phoneid.services.possession import LinkUnusable

app = make_app()

_GONE_PAGE = (
    "<!doctype html><html lang=en><meta charset=utf-8><meta name=viewport content='width=device-width'>"
    "<title>Link expired</title><body style='font-family:sans-serif;margin:2rem'>"
    "<h1>This link has expired or was already used</h1>"
    "<p>Go back to the page where you started and ask for a new link.</p></body></html>"
)


@app.get("/l/<token>")
def open_link(token: str) -> Response[str]:
    try:
        target = container().possession.select_link(token)
    except LinkUnusable:
        return Response(
            status_code=410,
            content_type=content_types.TEXT_HTML,
            body=_GONE_PAGE,
            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
        )
    return Response(
        status_code=302,
        body="",
        headers={"Location": target, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )


def _rate_key(event: dict[str, Any]) -> str:
    return f"link:{source_address(event)}"


handler = entrypoint(app, rate_key=_rate_key, json_body=False)
