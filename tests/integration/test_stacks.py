"""A test's stack is a fresh stack: what a worker keeps of a provisioned stack (tests/stacks.py)
comes back for each later test with the same resources and nothing an earlier test wrote."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from moto import mock_aws

from phoneid_dev.outbox import sent_messages
from phoneid_dev.stack import LocalStack
from tests import stacks
from tests.harness import PUBLIC_BASE_URL, Api

PARAMETERS = {"Tier": "sandbox", "Region": "US", "LogLevel": "WARNING"}
OVERRIDES = {"PUBLIC_BASE_URL": PUBLIC_BASE_URL}
_SAMPLE_VALUES: dict[str, Any] = {"S": {"S": "written"}, "N": {"N": "1"}, "B": {"B": b"written"}}


def _written(stack: LocalStack) -> dict[str, int]:
    """What the stack holds that a test writes: items of each table, messages of each queue,
    objects of each bucket, and the text messages sent (only the non-empty)."""
    dynamodb, sqs, s3 = boto3.client("dynamodb"), boto3.client("sqs"), boto3.client("s3")
    held = {
        table: dynamodb.scan(TableName=stack.physical_ids[table], Select="COUNT")["Count"]
        for table in stack.template.of_type("AWS::DynamoDB::Table")
    }
    held |= {
        queue: int(
            sqs.get_queue_attributes(
                QueueUrl=stack.physical_ids[queue], AttributeNames=["ApproximateNumberOfMessages"]
            )["Attributes"]["ApproximateNumberOfMessages"]
        )
        for queue in stack.template.of_type("AWS::SQS::Queue")
    }
    held |= {
        bucket: s3.list_objects_v2(Bucket=stack.physical_ids[bucket])["KeyCount"]
        for bucket in stack.template.of_type("AWS::S3::Bucket")
    }
    held["text messages"] = len(sent_messages())
    return {name: count for name, count in held.items() if count}


def _write_everywhere(stack: LocalStack) -> None:
    """An item in each table, a message in each queue, an object in each bucket, a text message."""
    dynamodb, sqs, s3 = boto3.client("dynamodb"), boto3.client("sqs"), boto3.client("s3")
    for table, props in stack.template.of_type("AWS::DynamoDB::Table").items():
        types = {each["AttributeName"]: each["AttributeType"] for each in props["AttributeDefinitions"]}
        key = {
            each["AttributeName"]: _SAMPLE_VALUES[types[each["AttributeName"]]] for each in props["KeySchema"]
        }
        dynamodb.put_item(TableName=stack.physical_ids[table], Item=key)
    for queue in stack.template.of_type("AWS::SQS::Queue"):
        sqs.send_message(QueueUrl=stack.physical_ids[queue], MessageBody="written")
    for bucket in stack.template.of_type("AWS::S3::Bucket"):
        s3.put_object(Bucket=stack.physical_ids[bucket], Key="written", Body=b"written")
    boto3.client("sns").publish(PhoneNumber="+14045550100", Message="written")


def test_a_stack_restored_for_a_later_test_holds_nothing_an_earlier_test_wrote() -> None:
    # Given a test that wrote to every table, queue and bucket of its stack, and sent a message
    with mock_aws(config={"core": {"reset_boto3_session": False}}):
        first = stacks.provisioned(PARAMETERS, OVERRIDES)
        _write_everywhere(first)
        written = _written(first)
    assert set(written) == {
        *first.template.of_type("AWS::DynamoDB::Table"),
        *first.template.of_type("AWS::SQS::Queue"),
        *first.template.of_type("AWS::S3::Bucket"),
        "text messages",
    }

    for _later in range(2):
        # When a later test builds the same stack
        with mock_aws(config={"core": {"reset_boto3_session": False}}):
            later = stacks.provisioned(PARAMETERS, OVERRIDES)

            # Then it has the same resources, and none of what an earlier test wrote
            assert later is not first
            assert later.physical_ids == first.physical_ids
            assert _written(later) == {}
            _write_everywhere(later)  # what the next one must not see either


@pytest.mark.parametrize("turn", ["first", "second"])
def test_every_test_starts_from_a_stack_that_holds_nothing(api: Api, turn: str) -> None:
    # Given this worker's stack, whichever test had it before (the other turn writes too)
    # Then it holds nothing but what building it wrote: the token signing keys of its rotation
    assert _written(api.stack) == {"TokenKeysTable": len(api.table_items("TokenKeysTable"))}

    # When this test writes everywhere
    _write_everywhere(api.stack)
    assert _written(api.stack)
