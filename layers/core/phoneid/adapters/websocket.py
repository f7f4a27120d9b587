"""Pushing to a desktop client's WebSocket through the API Gateway management API."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import error_code, internal_error


class ApiGatewaySocketNotifier:
    def __init__(self, client_for: Callable[[str], Any]) -> None:
        # One management client per endpoint (the endpoint is the WebSocket API's stage URL).
        self._client_for = client_for

    def notify(self, endpoint: str, connection_id: str, message: Mapping[str, Any]) -> bool:
        client = self._client_for(endpoint)
        try:
            client.post_to_connection(ConnectionId=connection_id, Data=json.dumps(message).encode())
        except ClientError as error:
            if error_code(error) == "GoneException":
                return False
            raise internal_error("WebSocket push", error) from error
        except BotoCoreError as error:
            raise internal_error("WebSocket push", error) from error
        return True
