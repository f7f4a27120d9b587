"""What the local stack does to serve many requests at once: answers are each request's own, and the
shortcuts it takes through moto give the results moto and AWS give."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import boto3
import pytest
from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from phoneid import bootstrap
from phoneid.domain.clients import Caller
from phoneid.domain.errors import InvalidCorrelationId
from tests.harness import Api, at_once

logger = Logger(child=True)


class _StepsThatWouldMeet:
    """A staged flow whose ``validate`` waits (a second at most) for another request to be inside a
    handler too: the two meet only if their invocations overlap."""

    def __init__(self) -> None:
        self._both_inside = threading.Barrier(2, timeout=1)

    def validate(self, caller: Caller, correlation_id: str) -> Any:
        self._both_inside.wait()  # BrokenBarrierError (an 8000) when the other never came in
        raise InvalidCorrelationId()


def test_in_this_process_one_invocation_runs_at_a_time(api: Api) -> None:
    # Given two integrators whose validate calls are sent at once
    first, second = api.integrator(), api.integrator()
    first.access_token, second.access_token  # noqa: B018 - tokens first: only the calls are sent at once
    bootstrap.override(staged=_StepsThatWouldMeet())
    calls = iter([first, second])
    lock = threading.Lock()

    def validate() -> Any:
        with lock:
            integrator = next(calls)
        return integrator.post("/v3/validate", {"correlationId": str(uuid.uuid4())})

    # When both are sent / Then neither met the other inside a handler: one invocation at a time, as
    # Lambda runs them per process (Powertools keeps an invocation's event process-wide)
    answers = at_once(validate, times=2)
    assert [answer.status for answer in answers] == [500, 500]


@pytest.mark.overlapping
def test_requests_that_overlap_are_each_answered_from_their_own_event(api: Api) -> None:
    # Given eight integrators, each with a correlation id of its own (unknown to the stack)
    integrators = [api.integrator() for _ in range(8)]
    sent = {integrator.client_id: str(uuid.uuid4()) for integrator in integrators}
    for integrator in integrators:
        assert integrator.access_token
    calls = iter(integrators)
    lock = threading.Lock()

    def validate() -> tuple[str, Any]:
        with lock:
            integrator = next(calls)
        return integrator.client_id, integrator.post(
            "/v3/validate", {"correlationId": sent[integrator.client_id]}
        )

    # When they call at once, on functions running in worker processes as phoneid dev runs them
    answers = at_once(validate, times=8)

    # Then each is refused with its own correlation id
    for client_id, response in answers:
        assert response.status == 403
        assert response.json()["code"] == 8008
        assert response.json()["correlationId"] == sent[client_id]


EVERY_TYPE = {
    "pk": {"S": "a"},
    "n": {"N": "12.5"},
    "b": {"B": b"\x00\xffbytes"},
    "ss": {"SS": ["x", "y"]},
    "ns": {"NS": ["1", "2"]},
    "bs": {"BS": [b"\x01", b"\x02"]},
    "m": {"M": {"inner": {"M": {"deep": {"L": [{"S": "s"}, {"N": "3"}, {"NULL": True}]}}}}},
    "l": {"L": [{"BOOL": False}, {"M": {}}, {"L": []}]},
    "null": {"NULL": True},
    "yes": {"BOOL": True},
}


def _sets_sorted(item: dict[str, Any]) -> dict[str, Any]:
    return {
        name: {kind: sorted(v) if kind in ("SS", "NS", "BS") else v for kind, v in value.items()}
        for name, value in item.items()
    }


def test_items_of_every_type_come_back_as_they_were_written(dynamodb: Any) -> None:
    dynamodb.put_item(TableName="t", Item=EVERY_TYPE)

    got = dynamodb.get_item(TableName="t", Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"]
    scanned = dynamodb.scan(TableName="t")["Items"]

    assert _sets_sorted(got) == _sets_sorted(EVERY_TYPE)
    assert [_sets_sorted(item) for item in scanned] == [_sets_sorted(EVERY_TYPE)]


def test_one_update_expression_applies_each_call_its_own_values(dynamodb: Any) -> None:
    expression = (
        "SET #n = if_not_exists(#n, :start), l = list_append(if_not_exists(l, :empty), :more) "
        "ADD hits :one, tags :tag REMOVE gone"
    )

    def update(start: str, more: str, tag: str) -> dict[str, Any]:
        answer: dict[str, Any] = dynamodb.update_item(
            TableName="t",
            Key={"pk": {"S": "a"}},
            UpdateExpression=expression,
            ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={
                ":start": {"S": start},
                ":empty": {"L": []},
                ":more": {"L": [{"S": more}]},
                ":one": {"N": "1"},
                ":tag": {"SS": [tag]},
            },
            ReturnValues="ALL_NEW",
        )
        return _sets_sorted(answer["Attributes"])

    dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "gone": {"S": "soon"}})
    first = update("first", "one", "red")
    second = update("second", "two", "blue")

    assert first == {
        "pk": {"S": "a"},
        "name": {"S": "first"},
        "l": {"L": [{"S": "one"}]},
        "hits": {"N": "1"},
        "tags": {"SS": ["red"]},
    }
    assert second == {
        "pk": {"S": "a"},
        "name": {"S": "first"},
        "l": {"L": [{"S": "one"}, {"S": "two"}]},
        "hits": {"N": "2"},
        "tags": {"SS": ["blue", "red"]},
    }


def test_refused_updates_are_refused_every_time(dynamodb: Any) -> None:
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"N": "1"}})

    for _ in range(2):
        with pytest.raises(ClientError) as malformed:
            dynamodb.update_item(
                TableName="t",
                Key={"pk": {"S": "a"}},
                UpdateExpression="SET v = = :x",
                ExpressionAttributeValues={":x": {"N": "2"}},
            )
        assert malformed.value.response["Error"]["Code"] == "ValidationException"
        with pytest.raises(ClientError) as unmet:
            dynamodb.update_item(
                TableName="t",
                Key={"pk": {"S": "a"}},
                UpdateExpression="SET v = :x",
                ConditionExpression="v = :other",
                ExpressionAttributeValues={":x": {"N": "2"}, ":other": {"N": "5"}},
            )
        assert unmet.value.response["Error"]["Code"] == "ConditionalCheckFailedException"

    assert dynamodb.get_item(TableName="t", Key={"pk": {"S": "a"}})["Item"]["v"] == {"N": "1"}


def test_one_condition_expression_checks_each_call_its_own_values(dynamodb: Any) -> None:
    dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"N": "1"}, "b": {"B": b"\x00\xff"}})

    def update_if(condition: str, values: dict[str, Any], to: str) -> str:
        try:
            dynamodb.update_item(
                TableName="t",
                Key={"pk": {"S": "a"}},
                UpdateExpression="SET v = :to",
                ConditionExpression=condition,
                ExpressionAttributeValues={":to": {"N": to}, **values},
            )
        except ClientError as refused:
            return str(refused.response["Error"]["Code"])
        return "updated"

    assert update_if("v = :was", {":was": {"N": "1"}}, to="2") == "updated"
    assert update_if("v = :was", {":was": {"N": "1"}}, to="3") == "ConditionalCheckFailedException"
    assert update_if("v = :was", {":was": {"N": "2"}}, to="3") == "updated"
    # The same text as bytes and as a string are different values.
    assert update_if("b = :b", {":b": {"S": "AP8="}}, to="4") == "ConditionalCheckFailedException"
    assert update_if("b = :b", {":b": {"B": b"\x00\xff"}}, to="4") == "updated"
    for _ in range(2):  # the values an expression uses are known from the kept parse too
        assert update_if("v = :was", {":was": {"N": "4"}, ":unused": {"N": "0"}}, to="5") == (
            "ValidationException"
        )
    assert dynamodb.get_item(TableName="t", Key={"pk": {"S": "a"}})["Item"]["v"] == {"N": "4"}


def test_kms_keys_work_and_are_the_regions_and_accounts_they_were_asked_of(local_aws: None) -> None:
    for region in ("us-east-1", "eu-west-1"):
        kms = boto3.client("kms", region_name=region)
        key = kms.create_key(Description="pii")["KeyMetadata"]
        signing = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]

        sealed = kms.encrypt(KeyId=key["KeyId"], Plaintext=b"1999-08-08")["CiphertextBlob"]
        signature = kms.sign(KeyId=signing["KeyId"], Message=b"token", SigningAlgorithm="ECDSA_SHA_256")[
            "Signature"
        ]

        assert key["Arn"].startswith(f"arn:aws:kms:{region}:123456789012:key/")
        assert kms.decrypt(CiphertextBlob=sealed)["Plaintext"] == b"1999-08-08"
        assert kms.verify(
            KeyId=signing["KeyId"], Message=b"token", Signature=signature, SigningAlgorithm="ECDSA_SHA_256"
        )["SignatureValid"]
        assert [k["KeyId"] for k in kms.list_keys()["Keys"]] == [key["KeyId"], signing["KeyId"]]
