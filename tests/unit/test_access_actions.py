"""botocore calls as the IAM requests AWS authorizes for them (phoneid_dev.access.actions)."""

from __future__ import annotations

from typing import Any

import pytest

from phoneid_dev.access.actions import (
    Call,
    Request,
    Stack,
    Unmapped,
    apigateway,
    awslambda,
    cloudwatch,
    dynamodb,
    kms,
    registry,
    requests_of,
    s3,
    secretsmanager,
    ses,
    sns,
    sqs,
    stepfunctions,
)

ACCOUNT = "123456789012"


def call(
    service: str,
    operation: str,
    response: dict[str, Any] | None = None,
    url: str | None = None,
    **params: Any,
) -> Call:
    return Call(service, operation, params, "us-east-1", ACCOUNT, url=url, response=response)


def table(name: str) -> str:
    return f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{name}"


def test_a_transaction_is_each_items_own_action_on_its_table() -> None:
    requests = requests_of(
        call(
            "dynamodb",
            "TransactWriteItems",
            TransactItems=[
                {"Put": {"TableName": "A", "Item": {"pk": {"S": "1"}, "name": {"S": "x"}}}},
                {
                    "Update": {
                        "TableName": "B",
                        "Key": {},
                        "UpdateExpression": "SET #s = :s, n = if_not_exists(n, :z) REMOVE ttl",
                        "ExpressionAttributeNames": {"#s": "status"},
                    }
                },
                {"Delete": {"TableName": "A", "Key": {}}},
                {
                    "ConditionCheck": {
                        "TableName": "C",
                        "Key": {},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ],
        )
    )

    assert requests == [
        Request("dynamodb:PutItem", table("A"), {"dynamodb:Attributes": ("name", "pk")}),
        Request("dynamodb:UpdateItem", table("B"), {"dynamodb:Attributes": ("n", "status", "ttl")}),
        Request("dynamodb:DeleteItem", table("A")),
        Request("dynamodb:ConditionCheckItem", table("C")),
    ]


def test_reads_name_their_index_projection_and_select() -> None:
    [query] = requests_of(
        call(
            "dynamodb",
            "Query",
            TableName="E",
            IndexName="byClient",
            ProjectionExpression="#k, serviceId, a.b[1]",
            ExpressionAttributeNames={"#k": "kind"},
        )
    )
    [get] = requests_of(call("dynamodb", "GetItem", TableName="E", Key={}))
    batch = requests_of(
        call(
            "dynamodb",
            "BatchGetItem",
            RequestItems={"E": {"Keys": []}, "F": {"Keys": [], "ProjectionExpression": "pk"}},
        )
    )

    assert query == Request(
        "dynamodb:Query",
        f"{table('E')}/index/byClient",
        {"dynamodb:Attributes": ("a", "kind", "serviceId"), "dynamodb:Select": "SPECIFIC_ATTRIBUTES"},
    )
    assert get == Request("dynamodb:GetItem", table("E"), {"dynamodb:Select": "ALL_ATTRIBUTES"})
    assert batch == [
        Request("dynamodb:BatchGetItem", table("E"), {"dynamodb:Select": "ALL_ATTRIBUTES"}),
        Request(
            "dynamodb:BatchGetItem",
            table("F"),
            {"dynamodb:Attributes": ("pk",), "dynamodb:Select": "SPECIFIC_ATTRIBUTES"},
        ),
    ]


def test_s3_calls_are_the_object_actions_s3_authorizes() -> None:
    bucket = "arn:aws:s3:::b"

    assert requests_of(call("s3", "HeadObject", Bucket="b", Key="work/1/x", VersionId="v")) == [
        Request("s3:GetObjectVersion", f"{bucket}/work/1/x")
    ]
    assert requests_of(call("s3", "UploadPart", Bucket="b", Key="k", UploadId="u", PartNumber=1)) == [
        Request("s3:PutObject", f"{bucket}/k")
    ]
    assert requests_of(call("s3", "ListObjectsV2", Bucket="b", Prefix="work/1/")) == [
        Request("s3:ListBucket", bucket, {"s3:prefix": "work/1/"})
    ]
    assert requests_of(
        call("s3", "DeleteObjects", Bucket="b", Delete={"Objects": [{"Key": "a"}, {"Key": "c"}]})
    ) == [
        Request("s3:DeleteObject", f"{bucket}/a"),
        Request("s3:DeleteObject", f"{bucket}/c"),
    ]


def test_an_object_not_found_is_a_404_only_to_who_may_list_the_bucket() -> None:
    missing = {"Error": {"Code": "404"}, "ResponseMetadata": {"HTTPStatusCode": 404}}

    assert requests_of(call("s3", "HeadObject", missing, Bucket="b", Key="work/1/results/3")) == [
        Request("s3:GetObject", "arn:aws:s3:::b/work/1/results/3"),
        Request("s3:ListBucket", "arn:aws:s3:::b"),
    ]


def test_an_object_of_a_bucket_under_a_kms_key_is_also_that_keys_use_through_s3() -> None:
    key = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/k-1"
    stack = Stack(bucket_keys={"b": key})
    through_s3 = {
        "kms:ViaService": "s3.us-east-1.amazonaws.com",
        "kms:EncryptionContext:aws:s3:arn": "arn:aws:s3:::b",
    }

    assert requests_of(call("s3", "GetObject", Bucket="b", Key="work/1/x"), stack) == [
        Request("s3:GetObject", "arn:aws:s3:::b/work/1/x"),
        Request("kms:Decrypt", key, through_s3),
    ]
    assert requests_of(call("s3", "PutObject", Bucket="b", Key="k", Body=b""), stack) == [
        Request("s3:PutObject", "arn:aws:s3:::b/k"),
        Request("kms:GenerateDataKey", key, through_s3),
    ]
    assert requests_of(call("s3", "UploadPart", Bucket="b", Key="k", UploadId="u", PartNumber=1), stack)[
        1:
    ] == [
        Request("kms:GenerateDataKey", key, through_s3),
        Request("kms:Decrypt", key, through_s3),
    ]
    # A HEAD reads no data
    assert requests_of(call("s3", "HeadObject", Bucket="b", Key="k"), stack) == [
        Request("s3:GetObject", "arn:aws:s3:::b/k")
    ]


def test_an_sms_to_a_number_has_no_resource_and_a_topic_is_its_arn() -> None:
    topic = f"arn:aws:sns:us-east-1:{ACCOUNT}:t"

    assert requests_of(call("sns", "Publish", PhoneNumber="+15551230000", Message="m")) == [
        Request("sns:Publish", "*")
    ]
    assert requests_of(call("sns", "Publish", TopicArn=topic, Message="m")) == [Request("sns:Publish", topic)]


def test_an_email_is_sent_as_the_senders_identities_with_its_from_address() -> None:
    requests = requests_of(
        call(
            "sesv2",
            "SendEmail",
            FromEmailAddress="Connect <connect@phoneid.test>",
            Destination={"ToAddresses": ["ops@x.test"]},
            Content={},
        )
    )

    identity = f"arn:aws:ses:us-east-1:{ACCOUNT}:identity"
    context = {
        "ses:FromAddress": "connect@phoneid.test",
        "ses:Recipients": ("ops@x.test",),
        "ses:ApiVersion": "2",
    }
    assert requests == [
        Request("ses:SendEmail", f"{identity}/connect@phoneid.test", context),
        Request("ses:SendEmail", f"{identity}/phoneid.test", context),
    ]


def test_kms_calls_carry_their_encryption_context() -> None:
    [request] = requests_of(
        call(
            "kms",
            "GenerateDataKey",
            KeyId="k-1",
            KeySpec="AES_256",
            EncryptionContext={"use": "challenge", "clientId": "c"},
        )
    )

    assert request == Request(
        "kms:GenerateDataKey",
        f"arn:aws:kms:us-east-1:{ACCOUNT}:key/k-1",
        {
            "kms:EncryptionContext:use": "challenge",
            "kms:EncryptionContext:clientId": "c",
            "kms:EncryptionContextKeys": ("clientId", "use"),
        },
    )


def test_a_secret_is_named_by_the_arn_with_its_suffix() -> None:
    arn = f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:operator-AbCdEf"

    assert requests_of(call("secretsmanager", "GetSecretValue", {"ARN": arn}, SecretId="operator")) == [
        Request("secretsmanager:GetSecretValue", arn)
    ]


def test_a_websocket_message_manages_its_connection_of_the_api_and_stage() -> None:
    aws = "https://abc123.execute-api.us-east-1.amazonaws.com/live"
    expected = [
        Request(
            "execute-api:ManageConnections",
            f"arn:aws:execute-api:us-east-1:{ACCOUNT}:abc123/live/POST/@connections/c1=",
        )
    ]

    assert (
        requests_of(
            call(
                "apigatewaymanagementapi",
                "PostToConnection",
                url=f"{aws}/@connections/c1%3D",
                ConnectionId="c1=",
                Data=b"",
            )
        )
        == expected
    )
    # The local stack's management endpoint stands for the API's
    local = "http://127.0.0.1:3000/_ws-management"
    assert (
        requests_of(
            call(
                "apigatewaymanagementapi",
                "PostToConnection",
                url=f"{local}/@connections/c1%3D",
                ConnectionId="c1=",
                Data=b"",
            ),
            Stack(endpoints={local: aws}),
        )
        == expected
    )


def test_invoking_a_function_is_invoke_function_on_its_arn() -> None:
    assert requests_of(call("lambda", "Invoke", FunctionName="stack-RotateFunction")) == [
        Request("lambda:InvokeFunction", f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:stack-RotateFunction")
    ]


def test_an_operation_with_no_mapping_is_refused() -> None:
    with pytest.raises(Unmapped, match=r"no IAM mapping for sns\.ListTopics"):
        requests_of(call("sns", "ListTopics"))


def test_each_operation_is_mapped_once_by_its_services_module_and_all_are_in_the_registry() -> None:
    # Given each service's module of mappers, and the botocore services it maps
    modules = {
        dynamodb: {"dynamodb", "dynamodbstreams"},
        kms: {"kms"},
        s3: {"s3"},
        sns: {"sns"},
        sqs: {"sqs"},
        ses: {"ses", "sesv2"},
        secretsmanager: {"secretsmanager"},
        awslambda: {"lambda"},
        stepfunctions: {"stepfunctions"},
        apigateway: {"apigatewaymanagementapi"},
        cloudwatch: {"cloudwatch"},
    }
    mapped = [operation for module in modules for operation in module.MAPPERS]

    # Then no two modules map one operation, each maps only its services, and the registry has them all
    assert len(mapped) == len(set(mapped))
    assert [
        (module.__name__, service)
        for module, services in modules.items()
        for service, _ in module.MAPPERS
        if service not in services
    ] == []
    assert set(registry.MAPPERS) == set(mapped)


def test_a_streams_calls_are_dynamodb_actions_on_the_stream() -> None:
    stream = f"{table('Decisions')}/stream/2026-12-02T10:00:00.000"
    iterator = f"{stream}|1|AAAAAAAAAAE="

    assert requests_of(call("dynamodbstreams", "DescribeStream", StreamArn=stream)) == [
        Request("dynamodb:DescribeStream", stream)
    ]
    assert requests_of(
        call(
            "dynamodbstreams",
            "GetShardIterator",
            StreamArn=stream,
            ShardId="shardId-1",
            ShardIteratorType="LATEST",
        )
    ) == [Request("dynamodb:GetShardIterator", stream)]
    assert requests_of(call("dynamodbstreams", "GetRecords", ShardIterator=iterator)) == [
        Request("dynamodb:GetRecords", stream)
    ]
    with pytest.raises(Unmapped, match="parameters not understood"):
        requests_of(call("dynamodbstreams", "GetRecords", ShardIterator="opaque"))
