"""WebSocket API ($connect, $disconnect, $default): the desktop waits here for the Instant Link.

``$connect`` carries the flow's authToken in the query string (browsers cannot set headers on a
WebSocket); the connection is recorded on the session so the link's selection can be pushed.
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.bootstrap import container
from phoneid.domain.errors import PhoneIdError
from phoneid.tasks import logger


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = event.get("requestContext") or {}
    if request.get("routeKey") != "$connect":
        return {"statusCode": 200}
    token = (event.get("queryStringParameters") or {}).get("authToken")
    services = container()
    try:
        flow = services.tokens.authorize_flow(f"Bearer {token}" if token else None)
        services.possession.connect_socket(
            flow, services.settings.websocket_management_url, request["connectionId"]
        )
    except PhoneIdError as error:
        logger.info("websocket refused", extra={"code": error.code})
        return {"statusCode": 401 if error.code == 8002 else 403}
    return {"statusCode": 200}
