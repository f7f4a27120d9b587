"""moto's scan continued from its start key (``phoneid_dev.emulation.paged_scans``): every page the
same as moto's own scan gives on the same table (segments, filters, projections, limits, start keys,
keys added and removed between pages), and a page no longer walks the table up to its start key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.models.table import Table

MOTOS_SCAN = Table.scan.__wrapped__  # type: ignore[attr-defined]


@pytest.fixture
def dynamodb() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="flat",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        client.create_table(
            TableName="ranged",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "n", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "n", "AttributeType": "N"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        flat, ranged = [], []
        for index in range(240):
            kind = "identity" if index % 3 else "place"
            status = "active" if index % 5 else "inactive"
            flat.append({"pk": {"S": f"c#{index:05d}"}, "kind": {"S": kind}, "status": {"S": status}})
            ranged.append({"pk": {"S": f"h{index % 40}"}, "n": {"N": str(index)}, "kind": {"S": kind}})
        # In writes of 25 (BatchWriteItem's most): one call per item made this setup most of each test.
        for table, items in (("flat", flat), ("ranged", ranged)):
            for start in range(0, len(items), 25):
                puts = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
                assert not client.batch_write_item(RequestItems={table: puts})["UnprocessedItems"]
        yield client


def _both(client: Any, monkeypatch: pytest.MonkeyPatch, request: dict[str, Any]) -> dict[str, Any]:
    """The page the patched scan answers, asserted equal to moto's own scan's on the same table."""
    patched = client.scan(**request)
    with monkeypatch.context() as moto_only:
        moto_only.setattr(Table, "scan", MOTOS_SCAN)
        unpatched = client.scan(**request)
    for answer in (patched, unpatched):
        answer.pop("ResponseMetadata")
    assert patched == unpatched
    return patched


SCANS = [
    {"TableName": "flat", "Limit": 7},
    {"TableName": "flat", "Limit": 100},
    {
        "TableName": "flat",
        "Limit": 10,
        "FilterExpression": "kind = :identity AND #status = :active",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {":identity": {"S": "identity"}, ":active": {"S": "active"}},
        "ProjectionExpression": "pk, #status",
    },
    {
        "TableName": "flat",
        "Limit": 9,
        "ScanFilter": {"kind": {"AttributeValueList": [{"S": "place"}], "ComparisonOperator": "EQ"}},
    },
    {"TableName": "ranged", "Limit": 6},
    {
        "TableName": "ranged",
        "Limit": 11,
        "FilterExpression": "kind = :identity",
        "ExpressionAttributeValues": {":identity": {"S": "identity"}},
    },
]


@pytest.mark.parametrize("segments", [None, (0, 1), (0, 4), (3, 4), (1, 3), (2, 7)])
@pytest.mark.parametrize("scan", SCANS)
def test_every_page_is_motos_own(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch, scan: dict[str, Any], segments: tuple[int, int] | None
) -> None:
    request = dict(scan)
    if segments is not None:
        request |= {"Segment": segments[0], "TotalSegments": segments[1]}
    seen = 0
    while True:
        page = _both(dynamodb, monkeypatch, request)
        seen += page["ScannedCount"]
        if "LastEvaluatedKey" not in page:
            break
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    assert seen > 0


def test_keys_added_and_removed_between_pages_are_seen_as_moto_sees_them(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    request: dict[str, Any] = {"TableName": "flat", "Limit": 10, "Segment": 1, "TotalSegments": 3}
    added = 0
    while True:
        page = _both(dynamodb, monkeypatch, request)
        if "LastEvaluatedKey" not in page:
            break
        last = page["LastEvaluatedKey"]
        request["ExclusiveStartKey"] = last
        # Behind and ahead of the scan, a key made and one removed (the start key itself among them)
        for where in ("c#00000x", "c#99999"):
            dynamodb.put_item(TableName="flat", Item={"pk": {"S": f"{where}{added}"}, "kind": {"S": "new"}})
        dynamodb.delete_item(TableName="flat", Key=last)
        dynamodb.delete_item(TableName="flat", Key={"pk": {"S": f"c#{(added * 37) % 240:05d}"}})
        added += 1
    assert added > 3


def test_a_page_starts_at_its_start_key_without_walking_the_table_to_it(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a scan of 240 items in pages of 10 (the table's order read once)
    walked: list[int] = []
    sorted_tables: list[str] = []
    comparing, listing = Table._item_comes_before_dct, Table.all_items

    def compared(table: Table, *args: Any) -> bool:
        walked.append(1)
        return comparing(table, *args)

    def listed(table: Table) -> Any:
        sorted_tables.append(table.name)
        return listing(table)

    monkeypatch.setattr(Table, "_item_comes_before_dct", compared)
    monkeypatch.setattr(Table, "all_items", listed)
    request: dict[str, Any] = {"TableName": "flat", "Limit": 10}
    pages = 0

    # When every page is asked for
    while True:
        page = dynamodb.scan(**request)
        pages += 1
        if "LastEvaluatedKey" not in page:
            break
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # Then each page compared its start key with the item at it and the next, not with every item
    # before it (moto's own: 10 + 20 + ... + 230 comparisons), and the table was sorted once
    assert pages == 24  # moto gives no LastEvaluatedKey on a last page that is full
    assert len(walked) == 2 * (pages - 1)
    assert sorted_tables == ["flat"]
