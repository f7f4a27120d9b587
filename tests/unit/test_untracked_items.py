"""moto's DynamoDB answers calls without keeping every item it made for them
(``phoneid_dev.emulation.untracked_items``): the process does not grow with each call."""

from __future__ import annotations

import boto3
from moto import mock_aws
from moto.dynamodb.models.dynamo_type import Item


def test_items_made_for_answers_are_not_kept_and_stored_items_still_answer() -> None:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        for index in range(50):
            client.put_item(TableName="t", Item={"pk": {"S": f"k{index}"}, "n": {"N": str(index)}})
        tracked = len(Item.instances_tracked)  # type: ignore[attr-defined]

        # When the table is scanned, read and updated many times
        for _ in range(5):
            scanned = client.scan(TableName="t", Limit=20)
            client.get_item(TableName="t", Key={"pk": {"S": "k7"}})
            client.update_item(
                TableName="t",
                Key={"pk": {"S": "k7"}},
                UpdateExpression="SET n = n + :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
            )

        # Then moto kept none of the items it made to answer (moto's own: 5 x (20 + 2 + 1) more)
        assert len(Item.instances_tracked) == tracked  # type: ignore[attr-defined]
        assert len(scanned["Items"]) == 20
        assert client.get_item(TableName="t", Key={"pk": {"S": "k7"}})["Item"]["n"] == {"N": "12"}
        assert client.scan(TableName="t", Select="COUNT")["Count"] == 50
