"""GET /l/{token}: the customer opened the Instant Link on the phone."""

from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from phoneid.api.http import entrypoint, make_app, source_address
from phoneid.bootstrap import container
from phoneid.domain.possession import LinkUnusable

app = make_app()

# Self-contained (the phone may reach nothing else of the stack): the look of the demo's pages, a
# centered card readable on a phone, saying what happened and what to do next.
_GONE_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link expired or already used</title>
<style>
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center;
       padding: 1rem; background: #f5f6f8; color: #1d2330; font: 1.05rem/1.5 system-ui, sans-serif; }
main { width: 100%; max-width: 30rem; padding: 1.5rem 2rem; background: #fff; border-radius: 12px;
       box-shadow: 0 1px 4px rgba(0, 0, 0, .08); text-align: center; overflow-wrap: anywhere; }
h1 { margin: 0 0 .75rem; font-size: 1.5rem; line-height: 1.25; }
p { margin: .75rem 0 0; }
.what { color: #5b6475; }
</style>
</head>
<body>
<main>
<h1>This link can no longer be used</h1>
<p class="what">It has expired (a link works for 3 minutes), was already used, or a newer link
replaced it.</p>
<p><strong>What to do:</strong> go back to the page where you started, ask for a new link
(<em>Resend link</em>, or start again), and open the newest link we text you within 3 minutes.</p>
</main>
</body>
</html>
"""


def _gone() -> Response[str]:
    return Response(
        status_code=410,
        content_type=content_types.TEXT_HTML,
        body=_GONE_PAGE,
        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )


@app.get("/l/<token>")
def open_link(token: str) -> Response[str]:
    try:
        target = container().possession.select_link(token)
    except LinkUnusable:
        return _gone()
    return Response(
        status_code=302,
        body="",
        headers={"Location": target, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )


@app.exception_handler(NotFoundError)
def _odd_token(error: NotFoundError) -> Response[str]:
    """A token with characters no link has (``%00``, ``%E2%80%AE``) is just another unknown link."""
    return _gone()


def _rate_key(event: dict[str, Any]) -> str:
    return f"link:{source_address(event)}"


handler = entrypoint(app, rate_key=_rate_key, json_body=False)
