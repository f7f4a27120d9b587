"""POST /operator/v1/notifications: the operator's CAMARA subscription notifications (CloudEvents),
each with the bearer token the stack gave its subscription (docs/webhooks.md#push-before-poll)."""

from typing import Any

from aws_lambda_powertools.event_handler import Response

from phoneid.api.http import MAX_BODY_BYTES, entrypoint, make_app, source_address
from phoneid.bootstrap import container
from phoneid.domain.errors import MalformedRequest

app = make_app()


@app.post("/operator/v1/notifications", cache_control="no-store")
def notification() -> Response[str]:
    event = app.current_event
    body = event.decoded_body or ""
    if len(body.encode()) > MAX_BODY_BYTES:
        raise MalformedRequest(f"Malformed request: body over {MAX_BODY_BYTES} bytes")
    container().push_notifications.receive(event.headers.get("Authorization"), body)
    return Response(status_code=204, body="")


def _rate_key(event: dict[str, Any]) -> str:
    return f"operator:{source_address(event)}"


# CAMARA sends application/cloudevents+json: the body is read as JSON whatever its Content-Type.
handler = entrypoint(app, rate_key=_rate_key, json_body=False)
