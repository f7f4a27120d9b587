"""DynamoDB's operations as IAM authorizes them: each item of a transaction on its own, and the
attributes read or written as ``dynamodb:Attributes``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack, Value

MAPPERS = Mappers()


def _table_arn(call: Call, table: str) -> str:
    if table.startswith("arn:"):
        return table
    return f"arn:aws:dynamodb:{call.region}:{call.account}:table/{table}"


def _split_top_level(text: str) -> Iterator[str]:
    """``text`` split at the commas outside parentheses (function arguments of an expression)."""
    depth, start = 0, 0
    for at, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            yield text[start:at]
            start = at + 1
    yield text[start:]


def _attribute(path: str, names: Mapping[str, str]) -> str:
    """The top-level attribute a document path starts with (``#a.b[2]`` → what ``#a`` names)."""
    first = re.split(r"[.\[]", path.strip(), maxsplit=1)[0].strip()
    return names.get(first, first)


def _projected(
    projection: str | None, listed: Sequence[str] | None, names: Mapping[str, str]
) -> tuple[str, ...]:
    if projection:
        return tuple(
            sorted({_attribute(path, names) for path in _split_top_level(projection) if path.strip()})
        )
    return tuple(sorted(set(listed or ())))


_UPDATE_CLAUSE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b", re.IGNORECASE)


def _updated(expression: str, names: Mapping[str, str]) -> tuple[str, ...]:
    """The top-level attributes an update expression writes."""
    parts = _UPDATE_CLAUSE.split(expression)
    written = set()
    for keyword, body in zip(parts[1::2], parts[2::2], strict=True):
        for action in _split_top_level(body):
            if not action.strip():
                continue
            if keyword.upper() == "SET":
                path = action.split("=", 1)[0]
            elif keyword.upper() in ("ADD", "DELETE"):
                path = action.split()[0]
            else:
                path = action
            written.add(_attribute(path, names))
    return tuple(sorted(written))


def _read_context(params: Mapping[str, Any], default_select: str) -> dict[str, Value]:
    names = params.get("ExpressionAttributeNames") or {}
    attributes = _projected(params.get("ProjectionExpression"), params.get("AttributesToGet"), names)
    context: dict[str, Value] = {}
    if attributes:
        context["dynamodb:Attributes"] = attributes
    select = params.get("Select") or ("SPECIFIC_ATTRIBUTES" if attributes else default_select)
    context["dynamodb:Select"] = str(select)
    return context


def _write_context(params: Mapping[str, Any], attributes: tuple[str, ...]) -> dict[str, Value]:
    context: dict[str, Value] = {}
    if attributes:
        context["dynamodb:Attributes"] = attributes
    if params.get("ReturnValues"):
        context["dynamodb:ReturnValues"] = str(params["ReturnValues"])
    return context


def _item_request(call: Call, operation: str, params: Mapping[str, Any]) -> Request:
    """One item operation (on its own, or one item of a transaction)."""
    table = _table_arn(call, params["TableName"])
    names = params.get("ExpressionAttributeNames") or {}
    if operation == "GetItem":
        context = _read_context(params, "ALL_ATTRIBUTES")
    elif operation == "PutItem":
        context = _write_context(params, tuple(sorted(params["Item"])))
    elif operation == "UpdateItem":
        written = (
            _updated(params["UpdateExpression"], names)
            if params.get("UpdateExpression")
            else tuple(sorted(params.get("AttributeUpdates") or ()))
        )
        context = _write_context(params, written)
    else:
        context = _write_context(params, ())
    return Request(f"dynamodb:{operation}", table, context)


@MAPPERS.maps("dynamodb", "GetItem", "PutItem", "UpdateItem", "DeleteItem")
def _dynamodb_item(call: Call, _: Stack) -> list[Request]:
    return [_item_request(call, call.operation, call.params)]


@MAPPERS.maps("dynamodb", "Query", "Scan")
def _dynamodb_read(call: Call, _: Stack) -> list[Request]:
    table = _table_arn(call, call.params["TableName"])
    index = call.params.get("IndexName")
    resource = f"{table}/index/{index}" if index else table
    default = "ALL_PROJECTED_ATTRIBUTES" if index else "ALL_ATTRIBUTES"
    return [Request(f"dynamodb:{call.operation}", resource, _read_context(call.params, default))]


@MAPPERS.maps("dynamodb", "BatchGetItem")
def _dynamodb_batch_get(call: Call, _: Stack) -> list[Request]:
    return [
        Request("dynamodb:BatchGetItem", _table_arn(call, table), _read_context(spec, "ALL_ATTRIBUTES"))
        for table, spec in call.params["RequestItems"].items()
    ]


@MAPPERS.maps("dynamodb", "BatchWriteItem")
def _dynamodb_batch_write(call: Call, _: Stack) -> list[Request]:
    return [
        Request("dynamodb:BatchWriteItem", _table_arn(call, table)) for table in call.params["RequestItems"]
    ]


_TRANSACT_WRITES = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


@MAPPERS.maps("dynamodb", "TransactWriteItems")
def _dynamodb_transact_write(call: Call, _: Stack) -> list[Request]:
    requests = []
    for item in call.params["TransactItems"]:
        ((kind, spec),) = item.items()
        requests.append(_item_request(call, _TRANSACT_WRITES[kind], spec))
    return requests


@MAPPERS.maps("dynamodb", "TransactGetItems")
def _dynamodb_transact_get(call: Call, _: Stack) -> list[Request]:
    return [_item_request(call, "GetItem", item["Get"]) for item in call.params["TransactItems"]]


@MAPPERS.maps(
    "dynamodb", "DescribeTable", "DescribeTimeToLive", "UpdateTimeToLive", "CreateTable", "DeleteTable"
)
def _dynamodb_table(call: Call, _: Stack) -> list[Request]:
    return [Request(f"dynamodb:{call.operation}", _table_arn(call, call.params["TableName"]))]


# DynamoDB Streams is its own endpoint, authorized as dynamodb:* actions on the stream's ARN.
@MAPPERS.maps("dynamodbstreams", "DescribeStream", "GetShardIterator")
def _stream(call: Call, _: Stack) -> list[Request]:
    return [Request(f"dynamodb:{call.operation}", str(call.params["StreamArn"]))]


@MAPPERS.maps("dynamodbstreams", "GetRecords")
def _stream_records(call: Call, _: Stack) -> list[Request]:
    """On the stream a shard iterator names: it begins with the stream's ARN, then ``|``."""
    stream = str(call.params["ShardIterator"]).split("|", 1)[0]
    if not stream.startswith("arn:aws:dynamodb:") or "/stream/" not in stream:
        raise ValueError("a shard iterator that names no stream")
    return [Request("dynamodb:GetRecords", stream)]
