"""IAM's decision on a function's calls, from its Policies in a template (phoneid_dev.access.policies)."""

from __future__ import annotations

import pytest
import yaml

from phoneid_dev.access.actions import Request
from phoneid_dev.access.policies import (
    Grant,
    PolicyError,
    Resolved,
    Resolver,
    Roles,
    condition_holds,
    decide_request,
)
from phoneid_dev.access.recording import StackFacts
from phoneid_dev.template import Template, _CfnLoader

ACCOUNT = "123456789012"
KEY_ARN = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/key-1"
TOPIC_ARN = f"arn:aws:sns:us-east-1:{ACCOUNT}:stack-Topic"
TABLE_ARN = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/stack-Table"

TEMPLATE = """
Parameters:
  Tier: {Type: String, AllowedValues: [sandbox, production], Default: sandbox}
  Secret: {Type: String, Default: ""}
Conditions:
  IsSandbox: !Equals [!Ref Tier, sandbox]
  HasSecret: !Not [!Equals [!Ref Secret, ""]]
Resources:
  Table: {Type: AWS::DynamoDB::Table}
  Topic: {Type: AWS::SNS::Topic}
  Key: {Type: AWS::KMS::Key}
  SendFunction:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - DynamoDBReadPolicy: {TableName: !Ref Table}
        - Statement:
            - !If
              - IsSandbox
              - {Effect: Allow, Action: sns:Publish, Resource: !Ref Topic}
              - {Effect: Allow, Action: sns:Publish, Resource: "*"}
            - !If
              - IsSandbox
              - !Ref AWS::NoValue
              - {Effect: Deny, Action: sns:Publish, Resource: !Sub "arn:${AWS::Partition}:sns:*:*:*"}
            - Effect: Allow
              Action: [kms:Decrypt, kms:GenerateDataKey]
              Resource: !GetAtt Key.Arn
              Condition:
                StringEquals: {kms:EncryptionContext:use: challenge}
        - !If
          - HasSecret
          - Statement:
              - Effect: Allow
                Action: secretsmanager:GetSecretValue
                Resource: !Sub "arn:${AWS::Partition}:secretsmanager:*:*:secret:${Secret}*"
          - !Ref AWS::NoValue
  ReadFunction:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Statement:
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:BatchGetItem]
              Resource: !GetAtt Table.Arn
              Condition:
                ForAllValues:StringEquals: {dynamodb:Attributes: [pk, status]}
                StringEquals: {dynamodb:Select: SPECIFIC_ATTRIBUTES}
            - Effect: Allow
              NotAction: [kms:*, "dynamodb:*"]
              NotResource: !Ref Topic
"""


def roles() -> Roles:
    return Roles(Template(yaml.load(TEMPLATE, Loader=_CfnLoader)))  # noqa: S506 - SafeLoader subclass


def facts(tier: str = "sandbox", secret: str = "") -> StackFacts:
    return StackFacts(
        name="stack",
        region="us-east-1",
        account=ACCOUNT,
        parameters={"Tier": tier, "Secret": secret},
        refs={"Table": "stack-Table", "Topic": TOPIC_ARN, "Key": "key-1"},
        attributes={"Table.Arn": TABLE_ARN, "Key.Arn": KEY_ARN, "Topic.TopicArn": TOPIC_ARN},
    )


def statements(function: str, **parameters: str) -> list[Resolved]:
    stack = facts(**parameters)
    return [Resolved.of(s, Resolver(stack)) for s in roles().statements(function, stack.parameters)]


def test_a_sam_policy_template_is_expanded_as_sam_expands_it() -> None:
    # Given DynamoDBReadPolicy on the table
    role = statements("SendFunction")

    # Then its read actions are allowed on the table and its indexes, and a write is not
    assert decide_request(role, Request("dynamodb:Query", f"{TABLE_ARN}/index/byPhone")).allowed
    assert decide_request(role, Request("dynamodb:Scan", TABLE_ARN)).allowed
    written = decide_request(role, Request("dynamodb:PutItem", TABLE_ARN))
    assert not written.allowed
    assert written.reason == "no statement allows dynamodb:PutItem"


def test_an_action_on_another_resource_is_denied_naming_where_it_is_allowed() -> None:
    decision = decide_request(
        statements("SendFunction"), Request("dynamodb:GetItem", TABLE_ARN.replace("Table", "Other"))
    )

    assert not decision.allowed
    assert decision.reason == f"dynamodb:GetItem is allowed only on {TABLE_ARN}, {TABLE_ARN}/index/*"


def test_a_failed_condition_denies_and_says_what_the_request_had() -> None:
    role = statements("SendFunction")
    opening = {"kms:EncryptionContext:use": "identity", "kms:EncryptionContext:clientId": "c1"}

    decision = decide_request(role, Request("kms:Decrypt", KEY_ARN, opening))

    assert not decision.allowed
    assert (
        "StringEquals kms:EncryptionContext:use ['challenge'] (the request's: 'identity')" in decision.reason
    )
    assert decide_request(
        role, Request("kms:Decrypt", KEY_ARN, {"kms:EncryptionContext:use": "challenge"})
    ).allowed
    assert not decide_request(role, Request("kms:Decrypt", KEY_ARN)).allowed  # no context at all


def test_fn_if_decides_each_tiers_statements_and_an_explicit_deny_wins() -> None:
    sandbox, production = statements("SendFunction"), statements("SendFunction", tier="production")
    to_topic, to_number = Request("sns:Publish", TOPIC_ARN), Request("sns:Publish", "*")

    # The Sandbox publishes to its topic only
    assert decide_request(sandbox, to_topic).allowed
    assert not decide_request(sandbox, to_number).allowed
    # Production texts numbers; its Allow on "*" matches a topic too, and the Deny wins there
    assert decide_request(production, to_number).allowed
    denied = decide_request(production, to_topic)
    assert not denied.allowed
    assert denied.reason == "explicitly denied by Policies[1].Statement[1]"


def test_a_whole_policy_under_fn_if_is_granted_only_when_its_condition_holds() -> None:
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:operator-AbCdEf"

    assert decide_request(
        statements("SendFunction", secret="operator"), Request("secretsmanager:GetSecretValue", secret)
    ).allowed
    without = decide_request(statements("SendFunction"), Request("secretsmanager:GetSecretValue", secret))
    assert without.reason == "no statement allows secretsmanager:GetSecretValue"


def test_attributes_and_select_conditions_restrict_a_read_to_its_projection() -> None:
    role = statements("ReadFunction")
    projected = {"dynamodb:Attributes": ("pk", "status"), "dynamodb:Select": "SPECIFIC_ATTRIBUTES"}
    wider = {"dynamodb:Attributes": ("pk", "pii"), "dynamodb:Select": "SPECIFIC_ATTRIBUTES"}

    assert decide_request(role, Request("dynamodb:GetItem", TABLE_ARN, projected)).allowed
    assert decide_request(role, Request("dynamodb:BatchGetItem", TABLE_ARN, projected)).allowed
    assert not decide_request(role, Request("dynamodb:GetItem", TABLE_ARN, wider)).allowed
    # No projection: every attribute, which the Select condition refuses (ForAllValues alone would not)
    assert not decide_request(
        role, Request("dynamodb:GetItem", TABLE_ARN, {"dynamodb:Select": "ALL_ATTRIBUTES"})
    ).allowed


def test_not_action_and_not_resource_allow_their_complements() -> None:
    role = statements("ReadFunction")

    assert decide_request(
        role, Request("lambda:InvokeFunction", "arn:aws:lambda:us-east-1:1:function:f")
    ).allowed
    assert not decide_request(role, Request("lambda:InvokeFunction", TOPIC_ARN)).allowed
    assert not decide_request(role, Request("kms:Encrypt", KEY_ARN)).allowed


@pytest.mark.parametrize(
    ("operator", "expected", "context", "holds"),
    [
        ("StringLike", ["work/*"], {"k": "work/b1/results/"}, True),
        ("StringLike", ["work/*"], {"k": "clients/a/upload/"}, False),
        ("StringLike", ["work/*"], {}, False),
        ("StringLikeIfExists", ["work/*"], {}, True),
        ("StringNotEquals", ["a"], {"k": "b"}, True),
        ("ArnLike", ["arn:aws:sns:*:*:topic-*"], {"k": "arn:aws:sns:us-east-1:1:topic-x"}, True),
        ("ArnLike", ["arn:aws:sns:*:*:topic-*"], {"k": "arn:aws:sqs:us-east-1:1:topic-x"}, False),
        ("ForAllValues:StringEquals", ["a", "b"], {"k": ("a",)}, True),
        ("ForAllValues:StringEquals", ["a", "b"], {"k": ("a", "c")}, False),
        ("ForAllValues:StringEquals", ["a", "b"], {}, True),
        ("ForAnyValue:StringEquals", ["a"], {"k": ("c", "a")}, True),
        ("ForAnyValue:StringEquals", ["a"], {}, False),
        ("Null", ["true"], {}, True),
        ("Null", ["false"], {"k": "x"}, True),
        ("Bool", ["true"], {"k": "True"}, True),
        ("NumericLessThanEquals", ["1000"], {"k": "999"}, True),
    ],
)
def test_condition_operators(
    operator: str, expected: list[str], context: dict[str, str | tuple[str, ...]], holds: bool
) -> None:
    assert condition_holds(operator, "k", expected, context) is holds


def test_condition_keys_are_case_insensitive() -> None:
    assert condition_holds(
        "StringEquals", "KMS:EncryptionContext:Use", ["challenge"], {"kms:EncryptionContext:use": "challenge"}
    )


def test_an_operator_the_check_does_not_know_fails_loudly() -> None:
    with pytest.raises(PolicyError, match="DateLessThan"):
        condition_holds("DateLessThan", "aws:CurrentTime", ["2030-01-01"], {})


def test_grants_are_named_as_the_template_writes_them() -> None:
    grants = roles().grants("SendFunction", {"Tier": "production", "Secret": "operator"})

    assert Grant("SendFunction", "sns:Publish", "*") in grants
    assert (
        Grant(
            "SendFunction",
            "kms:Decrypt",
            "${Key.Arn}",
            "StringEquals kms:EncryptionContext:use ['challenge']",
        )
        in grants
    )
    assert (
        Grant(
            "SendFunction",
            "dynamodb:Scan",
            "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${Table}/index/*",
        )
        in grants
    )
    # A Deny grants nothing
    assert not any(grant.resource.startswith("arn:${AWS::Partition}:sns") for grant in grants)
