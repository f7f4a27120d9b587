"""Batched DynamoDB reads and writes shared by the table stores: ``BatchWriteItem`` and
``BatchGetItem`` in rounds (unprocessed items and keys retried with backoff), a Query's pages, and
provider errors translated (reads of a signal source fail as ``SignalSourceError``, so the policy
decides; writes as the usual 8000; either marked ``throttled`` when the provider was throttling)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from decimal import Decimal
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.throttling import is_throttled
from phoneid.domain.signals import SignalSourceError

WRITE_BATCH = 25  # BatchWriteItem's limit
READ_BATCH = 100  # BatchGetItem's limit
_ROUNDS = 8  # tries of one batch before giving up on what stays unprocessed
_BACKOFF_SECONDS = 0.05
_MAX_BACKOFF_SECONDS = 1.0


@contextmanager
def source_errors(operation: str) -> Iterator[None]:
    """Nothing above an adapter sees a ClientError: a failing signal source raises ``SignalSourceError``."""
    try:
        yield
    except (ClientError, BotoCoreError) as error:
        failed = SignalSourceError(f"{operation} failed")
        failed.throttled = is_throttled(error)
        raise failed from error


def projection(attributes: Sequence[str]) -> dict[str, Any]:
    """A ProjectionExpression of ``attributes``, each by a placeholder (reserved words need one)."""
    names = {f"#a{index}": name for index, name in enumerate(attributes)}
    return {"ProjectionExpression": ", ".join(names), "ExpressionAttributeNames": names}


def _pause(attempt: int) -> None:
    time.sleep(min(_BACKOFF_SECONDS * 2**attempt, _MAX_BACKOFF_SECONDS))


def _identity(item: Mapping[str, Any]) -> tuple[str, str]:
    return str(item["pk"]["S"]), str(item.get("sk", {}).get("S", ""))


def put_all(dynamodb: Any, table: str, items: Iterable[dict[str, Any]], operation: str) -> int:
    """Every item written with BatchWriteItem, 25 at a time; the number written. An item whose key
    (pk, sk) repeats one earlier in the batch starts a new batch, so the later one wins."""
    count = 0
    batch: list[dict[str, Any]] = []
    keys: set[tuple[str, str]] = set()
    for item in items:
        key = _identity(item)
        if len(batch) == WRITE_BATCH or key in keys:
            _write(dynamodb, table, batch, operation)
            batch, keys = [], set()
        batch.append({"PutRequest": {"Item": item}})
        keys.add(key)
        count += 1
    if batch:
        _write(dynamodb, table, batch, operation)
    return count


def _write(dynamodb: Any, table: str, batch: list[dict[str, Any]], operation: str) -> None:
    pending: dict[str, Any] = {table: batch}
    for attempt in range(_ROUNDS):
        with provider_errors(operation):
            response = dynamodb.batch_write_item(RequestItems=pending)
        pending = response.get("UnprocessedItems") or {}
        if not pending:
            return
        _pause(attempt)
    raise internal_error(operation)


def read_keys(
    dynamodb: Any,
    table: str,
    keys: Iterable[dict[str, Any]],
    operation: str,
    errors: Callable[[str], AbstractContextManager[None]],
    *,
    consistent: bool = False,
    attributes: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the items under ``keys`` that exist, the keys still unprocessed after the rounds), with
    BatchGetItem, 100 keys at a time, unprocessed keys retried with backoff; ``errors(operation)``
    translates a provider error (``source_errors`` or ``provider_errors``). ``attributes``: only these
    are read (a projection; IAM may allow no others)."""
    wanted = list(keys)
    found: list[dict[str, Any]] = []
    unread: list[dict[str, Any]] = []
    for start in range(0, len(wanted), READ_BATCH):
        request: dict[str, Any] = {"Keys": wanted[start : start + READ_BATCH]}
        if consistent:
            request["ConsistentRead"] = True
        if attributes:
            request |= projection(attributes)
        pending: dict[str, Any] = {table: request}
        for attempt in range(_ROUNDS):
            with errors(operation):
                response = dynamodb.batch_get_item(RequestItems=pending)
            found.extend(response.get("Responses", {}).get(table, []))
            pending = response.get("UnprocessedKeys") or {}
            if not pending:
                break
            _pause(attempt)
        else:
            unread.extend(pending.get(table, {}).get("Keys", []))
    return found, unread


def get_all(
    dynamodb: Any, table: str, keys: Iterable[dict[str, Any]], operation: str
) -> list[dict[str, Any]]:
    """The items under ``keys`` that exist (a signal source's read: every key, or SignalSourceError)."""
    found, unread = read_keys(dynamodb, table, keys, operation, source_errors)
    if unread:
        raise SignalSourceError(f"{operation} left keys unprocessed")
    return found


def query_pages(dynamodb: Any, operation: str, **query: Any) -> Iterator[dict[str, Any]]:
    """Every page of a Query (a signal source's read)."""
    start: dict[str, Any] | None = None
    while True:
        with source_errors(operation):
            page = dynamodb.query(**query, **({"ExclusiveStartKey": start} if start else {}))
        yield page
        start = page.get("LastEvaluatedKey")
        if not start:
            return


def to_dynamo(value: Any) -> Any:
    """Plain values as DynamoDB takes them: floats as Decimal, nested maps and lists too."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, Mapping):
        return {str(k): to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    return value


def from_dynamo(value: Any) -> Any:
    """DynamoDB's numbers back to int or float, nested maps and lists too."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        return {str(k): from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | set):
        return [from_dynamo(v) for v in value]
    return value
