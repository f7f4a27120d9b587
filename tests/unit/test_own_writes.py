"""The rule of ``phoneid.adapters.dynamodb.own_writes`` on a stub client: a conditional write's failure
is its own earlier success only when the item carries this very call's write token."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from phoneid.adapters.dynamodb.own_writes import WRITE_TOKEN, OwnWrites, with_token


class AppliedThenRetried:
    """A table whose first attempt is applied and whose answer is lost: the retry fails its condition
    against the item written (``written``), or against another request's (``theirs``)."""

    def __init__(self, theirs: dict[str, Any] | None = None) -> None:
        self.theirs = theirs
        self.requests: list[dict[str, Any]] = []

    def _fail(self, written: dict[str, Any]) -> ClientError:
        return ClientError(
            {
                "Error": {
                    "Code": "ConditionalCheckFailedException",
                    "Message": "The conditional request failed",
                },
                "Item": self.theirs if self.theirs is not None else written,
            },
            "PutItem",
        )

    def put_item(self, **request: Any) -> Any:
        self.requests.append(request)
        raise self._fail(request["Item"])

    def update_item(self, **request: Any) -> Any:
        self.requests.append(request)
        token = request["ExpressionAttributeValues"][":writeToken"]
        raise self._fail({"pk": {"S": "a"}, "hits": {"N": "3"}, WRITE_TOKEN: token})


def test_a_put_that_finds_its_own_item_is_the_success_it_was() -> None:
    table = AppliedThenRetried()
    answer = OwnWrites(table).put_item(
        TableName="t", Item={"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)"
    )
    assert answer == {}
    (request,) = table.requests
    assert request["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"


def test_an_update_that_finds_its_own_token_answers_the_values_it_wrote() -> None:
    table = AppliedThenRetried()
    answer = OwnWrites(table).update_item(
        TableName="t",
        Key={"pk": {"S": "a"}},
        UpdateExpression="ADD hits :one",
        ConditionExpression="hits < :max",
        ExpressionAttributeValues={":one": {"N": "1"}, ":max": {"N": "10"}},
        ReturnValues="UPDATED_NEW",
    )
    assert answer == {"Attributes": {"pk": {"S": "a"}, "hits": {"N": "3"}}}


def test_the_same_values_written_by_another_request_are_its_conflict() -> None:
    # Given a racing request that wrote the very same item, under its own token
    table = AppliedThenRetried(theirs={"pk": {"S": "a"}, WRITE_TOKEN: {"S": "another-requests-token"}})

    # When this request's conditional put fails, Then the conflict is raised as it is
    with pytest.raises(ClientError, match="ConditionalCheckFailedException"):
        OwnWrites(table).put_item(
            TableName="t", Item={"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)"
        )


@pytest.mark.parametrize(
    ("expression", "tokened"),
    [
        ("SET a = :a", "SET #writeToken = :writeToken, a = :a"),
        ("REMOVE #sealed", "REMOVE #sealed SET #writeToken = :writeToken"),
        ("ADD hits :one", "ADD hits :one SET #writeToken = :writeToken"),
        (
            "SET kind = :roster ADD serviceIds :ids",
            "SET #writeToken = :writeToken, kind = :roster ADD serviceIds :ids",
        ),
        ("DELETE serviceIds :ids", "DELETE serviceIds :ids SET #writeToken = :writeToken"),
    ],
)
def test_the_token_joins_the_set_clause_or_makes_one(expression: str, tokened: str) -> None:
    assert with_token(expression) == tokened
