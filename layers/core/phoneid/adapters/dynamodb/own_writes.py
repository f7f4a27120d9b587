"""Conditional writes that recognise their own earlier success.

botocore retries a call whose answer did not come (a read timeout, a reset connection: ADR 0054).
The first attempt may have been applied all the same; for a conditional write the retry then fails
its own condition (``attribute_not_exists(pk)`` finds the item it wrote, ``#version = :read`` finds
the version it set) and the caller is told of a conflict that is its own success: a 500 on
``/v3/start``, a step refused as out of order.

Every conditional ``PutItem`` and ``UpdateItem`` made through ``OwnWrites`` carries a write token of
its own (``writeToken``, random per call; botocore's retries send the same parameters, so the same
token) and asks for the item as it is when the condition fails
(``ReturnValuesOnConditionCheckFailure: ALL_OLD``, no extra call, no extra read unit). A failure
whose item carries this call's token is this call's earlier attempt: it is answered as the success
it was. Any other failure is the conflict it says. The token is written with the item, so two
requests that write the same values are still told apart (two racing wrong codes each count).

Not covered, and why:

- ``DeleteItem``: a deleted item leaves nothing to recognise. A retried conditional delete whose first
  attempt was applied is refused as the conflict it looks like (a refresh token's use: the caller asks
  ``/token`` again with its credentials).
- ``TransactWriteItems``: botocore fills in ``ClientRequestToken`` once per call, and DynamoDB answers a
  repeat of the same token with the first attempt's success (for 10 minutes).
- Unconditional writes: repeating them is harmless.
"""

from __future__ import annotations

import re
import secrets
from typing import Any, Final

from botocore.exceptions import ClientError

WRITE_TOKEN: Final = "writeToken"
_NAME: Final = "#writeToken"
_VALUE: Final = ":writeToken"
_SET: Final = re.compile(r"\bSET\s", re.IGNORECASE)


def _token() -> str:
    return secrets.token_urlsafe(12)


def _recognised(error: ClientError, token: str) -> dict[str, Any] | None:
    """The item this call wrote, when ``error`` is its own earlier attempt's success; else None."""
    if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
        return None
    item: Any = error.response.get("Item") or {}
    return dict(item) if item.get(WRITE_TOKEN) == {"S": token} else None


def _answer(request: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """What the successful attempt answered, as far as a caller reads it: the item as written for
    ``ReturnValues`` asking for new values (a superset of ``UPDATED_NEW``), nothing otherwise."""
    if request.get("ReturnValues") in ("ALL_NEW", "UPDATED_NEW"):
        return {"Attributes": {k: v for k, v in item.items() if k != WRITE_TOKEN}}
    return {}


def with_token(update_expression: str) -> str:
    """``update_expression`` that also sets the write token (in its SET clause, or a new one)."""
    if _SET.search(update_expression):
        return _SET.sub(f"SET {_NAME} = {_VALUE}, ", update_expression, count=1)
    return f"{update_expression} SET {_NAME} = {_VALUE}"


class OwnWrites:
    """A DynamoDB client whose conditional puts and updates recognise their own earlier success;
    everything else is the client's own (``meta``, ``exceptions``, every other operation)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def put_item(self, **request: Any) -> Any:
        if "ConditionExpression" not in request:
            return self._client.put_item(**request)
        token = _token()
        request = {
            **request,
            "Item": {**request["Item"], WRITE_TOKEN: {"S": token}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        return self._once(self._client.put_item, request, token)

    def update_item(self, **request: Any) -> Any:
        if "ConditionExpression" not in request:
            return self._client.update_item(**request)
        token = _token()
        values = request.get("ExpressionAttributeValues", {})
        request = {
            **request,
            "UpdateExpression": with_token(request["UpdateExpression"]),
            "ExpressionAttributeNames": {**request.get("ExpressionAttributeNames", {}), _NAME: WRITE_TOKEN},
            "ExpressionAttributeValues": {**values, _VALUE: {"S": token}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        return self._once(self._client.update_item, request, token)

    @staticmethod
    def _once(call: Any, request: dict[str, Any], token: str) -> Any:
        try:
            return call(**request)
        except ClientError as error:
            item = _recognised(error, token)
            if item is None:
                raise
            return _answer(request, item)
