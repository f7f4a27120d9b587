"""The local DynamoDB's transactions: all or nothing, as DynamoDB's, at a cost independent of table size."""

from __future__ import annotations

import concurrent.futures
from typing import Any

import pytest


def put(name: str, value: str, condition: str | None = None) -> dict[str, Any]:
    operation: dict[str, Any] = {"TableName": "t", "Item": {"pk": {"S": name}, "v": {"S": value}}}
    if condition:
        operation["ConditionExpression"] = condition
    return {"Put": operation}


def stored(dynamodb: Any) -> dict[str, str]:
    return {item["pk"]["S"]: item["v"]["S"] for item in dynamodb.scan(TableName="t")["Items"]}


def test_a_cancelled_transaction_leaves_every_item_as_it_was(dynamodb: Any) -> None:
    # Given two items
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"S": "old"}})
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "c"}, "v": {"S": "kept"}})

    # When a transaction overwrites one, adds another, and then fails on the third's condition
    with pytest.raises(dynamodb.exceptions.TransactionCanceledException) as cancelled:
        dynamodb.transact_write_items(
            TransactItems=[
                put("a", "new"),
                put("b", "added"),
                put("c", "replaced", condition="attribute_not_exists(pk)"),
            ]
        )

    # Then nothing it wrote remains, and the reasons name the failing item
    assert stored(dynamodb) == {"a": "old", "c": "kept"}
    reasons = [reason["Code"] for reason in cancelled.value.response["CancellationReasons"]]
    assert reasons == ["None", "None", "ConditionalCheckFailed"]


def test_a_transaction_naming_one_item_twice_is_refused_and_writes_nothing(dynamodb: Any) -> None:
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"S": "old"}})

    with pytest.raises(dynamodb.exceptions.ClientError):
        dynamodb.transact_write_items(TransactItems=[put("b", "added"), put("a", "x"), put("a", "y")])

    assert stored(dynamodb) == {"a": "old"}


def test_a_transaction_that_succeeds_writes_every_item(dynamodb: Any) -> None:
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"S": "old"}})

    dynamodb.transact_write_items(
        TransactItems=[put("a", "new", condition="attribute_exists(pk)"), put("b", "added")]
    )

    assert stored(dynamodb) == {"a": "new", "b": "added"}


def test_a_transaction_does_not_copy_the_tables_it_touches(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a table of many items
    for first in range(0, 500, 25):
        dynamodb.batch_write_item(
            RequestItems={
                "t": [
                    {"PutRequest": {"Item": {"pk": {"S": f"k{n}"}, "v": {"S": "x"}}}}
                    for n in range(first, first + 25)
                ]
            }
        )
    from moto.dynamodb.models.dynamo_type import Item

    copied: list[Any] = []
    original = Item.__deepcopy__
    monkeypatch.setattr(Item, "__deepcopy__", lambda self, memo: copied.append(self) or original(self, memo))

    # When a transaction writes one more
    dynamodb.transact_write_items(TransactItems=[put("new", "y")])

    # Then no stored item was copied to back the table up
    assert copied == []
    assert stored(dynamodb)["new"] == "y"


def test_a_read_sees_an_item_as_one_write_left_it(dynamodb: Any) -> None:
    # Given an item whose map and count one writer grows together, key by key, in one UpdateItem each
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "m": {"M": {}}, "n": {"N": "0"}})
    writes = 600

    def write() -> None:
        for n in range(1, writes + 1):
            dynamodb.update_item(
                TableName="t",
                Key={"pk": {"S": "a"}},
                UpdateExpression="SET m.#k = :v, n = :n",
                ExpressionAttributeNames={"#k": f"k{n}"},
                ExpressionAttributeValues={":v": {"N": str(n)}, ":n": {"N": str(n)}},
            )

    # When readers read it while it is written
    def read() -> list[tuple[int, int]]:
        seen = []
        for _ in range(300):
            item = dynamodb.get_item(TableName="t", Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"]
            seen.append((len(item["m"]["M"]), int(item["n"]["N"])))
        return seen

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        writer = pool.submit(write)
        readers = [pool.submit(read) for _ in range(2)]
        writer.result()
        reads = [pair for reader in readers for pair in reader.result()]

    # Then every read answered, each with the map and the count of one and the same write
    assert len(reads) == 600
    assert all(keys == count for keys, count in reads), [pair for pair in reads if pair[0] != pair[1]][:5]
