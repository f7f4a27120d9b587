"""The local stack's DynamoDB TTL (phoneid_dev.ttl): what it deletes, and that it never pages a table
with Scan, whose every page moto finds by sorting the whole table (a big Connect file's tables took
minutes a sweep and timed out the workflow's own calls)."""

from __future__ import annotations

import threading
from typing import Any

import boto3
import pytest
from moto.dynamodb.models.table import Table

from phoneid_dev.ttl import TtlSweeper, ttl_tables
from tests.harness import Api


def _table_without_consumers(api: Api) -> tuple[str, str, list[str]]:
    """(physical name, TTL attribute, key names) of a TTL table no function reads the stream of."""
    chosen = next(t for t in ttl_tables(api.stack) if not t.consumers)
    physical = api.stack.physical_ids[chosen.table]
    schema = boto3.client("dynamodb").describe_table(TableName=physical)["Table"]["KeySchema"]
    return physical, chosen.attribute, [k["AttributeName"] for k in schema]


def _item(keys: list[str], n: int, ttl: dict[str, str] | None, attribute: str) -> dict[str, Any]:
    item: dict[str, Any] = {name: {"S": f"ttl-test-{n}"} for name in keys}
    if ttl is not None:
        item[attribute] = ttl
    return item


def test_a_sweep_deletes_only_items_past_their_time_and_never_scans(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given items past their time, not yet, without the attribute, and with a string in it
    physical, attribute, keys = _table_without_consumers(api)
    dynamodb = boto3.client("dynamodb")
    now = int(api.clock.now().timestamp())
    stored = {
        0: {"N": str(now - 1)},
        1: {"N": str(now + 3600)},
        2: None,
        3: {"S": "soon"},
        4: {"N": str(now - 86_400)},
    }
    for n, ttl in stored.items():
        dynamodb.put_item(TableName=physical, Item=_item(keys, n, ttl, attribute))

    def no_scan(*_: Any, **__: Any) -> Any:
        raise AssertionError("the sweep paged a table with Scan")

    # When the local TTL sweeps, with Scan made to fail
    with monkeypatch.context() as patched:
        patched.setattr(Table, "scan", no_scan)
        swept = TtlSweeper(api.stack, api.clock.now).sweep()

    # Then the two items past their time are gone, the other three kept
    left = {item[keys[0]]["S"] for item in api.table_items(_logical(api, physical))}
    assert swept == 2
    assert {"ttl-test-1", "ttl-test-2", "ttl-test-3"} <= left
    assert not {"ttl-test-0", "ttl-test-4"} & left


def test_a_sweep_while_the_table_is_written_does_not_fail(api: Api) -> None:
    # Given a table other threads keep writing to
    physical, attribute, keys = _table_without_consumers(api)
    past = {"N": str(int(api.clock.now().timestamp()) - 1)}

    def write(first: int) -> None:
        client = boto3.client("dynamodb")
        for n in range(first, first + 150):
            client.put_item(TableName=physical, Item=_item(keys, n, past, attribute))

    writers = [threading.Thread(target=write, args=(first,)) for first in (1000, 2000)]
    for writer in writers:
        writer.start()
    # When it is swept again and again meanwhile
    swept = 0
    while any(writer.is_alive() for writer in writers):
        TtlSweeper(api.stack, api.clock.now).sweep()
        swept += 1
    for writer in writers:
        writer.join()

    # Then every sweep finished, and what the writers left past its time goes at the next
    assert swept >= 1
    TtlSweeper(api.stack, api.clock.now).sweep()
    assert [
        i for i in api.table_items(_logical(api, physical)) if i[keys[0]]["S"].startswith("ttl-test-")
    ] == []


def _logical(api: Api, physical: str) -> str:
    return next(name for name, value in api.stack.physical_ids.items() if value == physical)
