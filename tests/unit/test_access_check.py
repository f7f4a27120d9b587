"""The IAM check's verdict on a run's records (phoneid_dev.access.check)."""

from __future__ import annotations

from typing import Any

import yaml

from phoneid_dev.access.actions import Request
from phoneid_dev.access.check import Check, Records
from phoneid_dev.access.policies import Grant, Roles
from phoneid_dev.access.recording import StackFacts
from phoneid_dev.template import Template, _CfnLoader

ACCOUNT = "123456789012"
TABLE_ARN = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/stack-Table"
STACK = StackFacts(
    name="stack",
    region="us-east-1",
    account=ACCOUNT,
    parameters={"Tier": "sandbox"},
    refs={"Table": "stack-Table"},
    attributes={"Table.Arn": TABLE_ARN},
)
TEMPLATE = """
Parameters:
  Tier: {Type: String, AllowedValues: [sandbox, production], Default: sandbox}
Metadata:
  UnexercisedGrants: %s
Resources:
  Table: {Type: AWS::DynamoDB::Table}
  StoreFunction:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Statement:
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:PutItem]
              Resource: !GetAtt Table.Arn
"""


def roles(reasons: str = "{}") -> Roles:
    return Roles(Template(yaml.load(TEMPLATE % reasons, Loader=_CfnLoader)))  # noqa: S506 - SafeLoader subclass


def records(*calls: dict[str, Any]) -> Records:
    found = Records()
    found.add({"kind": "stack", "key": STACK.key, **STACK.to_json()})
    for each in calls:
        found.add(each)
    return found


def call(*requests: Request, function: str = "StoreFunction", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "call",
        "function": function,
        "service": "dynamodb",
        "operation": "X",
        "stack": STACK.key,
        "requests": [request.to_json() for request in requests],
        "test": "tests/t.py::test_it",
        **extra,
    }


def test_every_call_allowed_passes() -> None:
    report = Check(roles(), records(call(Request("dynamodb:GetItem", TABLE_ARN)))).run(judge_unused=False)

    assert report.ok
    assert report.text().endswith("every call allowed")


def test_a_call_the_role_does_not_allow_is_reported_with_its_test_and_stack() -> None:
    report = Check(roles(), records(call(Request("dynamodb:DeleteItem", TABLE_ARN)))).run(judge_unused=False)

    assert not report.ok
    text = report.text()
    assert f"StoreFunction  dynamodb:DeleteItem  on {TABLE_ARN}" in text
    assert "why: no statement allows dynamodb:DeleteItem" in text
    assert "stack: Tier='sandbox'" in text
    assert "test: tests/t.py::test_it" in text


def test_an_operation_with_no_mapping_fails_the_check() -> None:
    unmapped = {**call(), "operation": "ListTables", "error": "no IAM mapping for dynamodb.ListTables"}
    del unmapped["requests"]

    report = Check(roles(), records(unmapped)).run(judge_unused=False)

    assert not report.ok
    assert "StoreFunction  dynamodb.ListTables: no IAM mapping for dynamodb.ListTables" in report.text()


def test_a_call_no_function_could_be_found_for_fails_the_check() -> None:
    lost = {
        "kind": "unattributed",
        "service": "dynamodb",
        "operation": "GetItem",
        "where": "layers/core/phoneid/services/signals/request.py:73",
        "test": "tests/t.py::test_it",
    }

    report = Check(roles(), records(lost)).run(judge_unused=False)

    assert not report.ok
    assert (
        "no function could be found for: dynamodb.GetItem"
        " from layers/core/phoneid/services/signals/request.py:73" in (report.text())
    )


def test_a_granted_action_no_call_used_fails_the_unused_check() -> None:
    used = records(call(Request("dynamodb:GetItem", TABLE_ARN)))

    assert Check(roles(), used).run(judge_unused=False).ok  # a partial run judges calls only
    report = Check(roles(), used).run(judge_unused=True)

    assert not report.ok
    assert report.unused == [Grant("StoreFunction", "dynamodb:PutItem", "${Table.Arn}")]
    assert "StoreFunction  dynamodb:PutItem  on ${Table.Arn}" in report.text()


def test_a_reason_in_the_template_explains_an_unused_grant() -> None:
    explained = roles("{StoreFunction: {'dynamodb:PutItem': Written by the operator's import only.}}")

    report = Check(explained, records(call(Request("dynamodb:GetItem", TABLE_ARN)))).run(judge_unused=True)

    assert report.ok, report.text()
    assert report.text().endswith("every grant used, or explained (1 reasons)")


def test_a_reason_that_is_no_longer_needed_fails_the_check() -> None:
    stale = roles("{StoreFunction: {'dynamodb:GetItem': Never read., 'dynamodb:Scan': Never scanned.}}")
    both = records(call(Request("dynamodb:GetItem", TABLE_ARN), Request("dynamodb:PutItem", TABLE_ARN)))

    report = Check(stale, both).run(judge_unused=True)

    assert report.stale_reasons == [
        "StoreFunction dynamodb:GetItem: the suite uses every grant of it",
        "StoreFunction dynamodb:Scan: the role grants no such action",
    ]


def test_a_subprocess_call_belongs_to_the_test_its_test_process_was_running() -> None:
    run = records(
        {"kind": "test", "test": "tests/e2e/t.py::test_one", "pid": 40, "time": 100.0},
        {"kind": "test", "test": "tests/e2e/t.py::test_two", "pid": 40, "time": 200.0},
    )

    assert run.test_of({"origin": 40, "time": 250.0}) == "tests/e2e/t.py::test_two"
    assert run.test_of({"origin": 40, "time": 150.0}) == "tests/e2e/t.py::test_one"
