"""API Gateway's WebSocket management calls as IAM authorizes them."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack, Unmapped

MAPPERS = Mappers()

_CONNECTION_METHODS = {"PostToConnection": "POST", "GetConnection": "GET", "DeleteConnection": "DELETE"}


@MAPPERS.maps("apigatewaymanagementapi", *_CONNECTION_METHODS)
def _manage_connection(call: Call, stack: Stack) -> list[Request]:
    """``execute-api:ManageConnections`` on the connection, named by the API's id and stage (from the
    endpoint the client was made for: ``https://{apiId}.execute-api.{region}.amazonaws.com/{stage}``)."""
    url = call.url or ""
    for local, in_aws in stack.endpoints.items():
        if url.startswith(local.rstrip("/") + "/"):
            url = in_aws.rstrip("/") + url[len(local.rstrip("/")) :]
    parts = urlsplit(url)
    found = re.fullmatch(r"([a-z0-9]+)\.execute-api\.([a-z0-9-]+)\.amazonaws\.com", parts.hostname or "")
    if found is None:
        raise Unmapped(f"{call.operation} to {url or 'no URL'}: not an API Gateway management endpoint")
    api_id, region = found.groups()
    stage = parts.path.strip("/").split("/")[0]
    method, connection = _CONNECTION_METHODS[call.operation], call.params["ConnectionId"]
    resource = (
        f"arn:aws:execute-api:{region}:{call.account}:{api_id}/{stage}/{method}/@connections/{connection}"
    )
    return [Request("execute-api:ManageConnections", resource)]
