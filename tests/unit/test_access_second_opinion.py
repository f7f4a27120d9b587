"""The access check's second opinion: @cloud-copilot/iam-simulate decides every request again, and the
check fails where it decides otherwise than our evaluator (phoneid_dev.access.second_opinion)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from phoneid_dev.access import second_opinion
from phoneid_dev.access.actions import Request
from phoneid_dev.access.check import Check, Records, Report, main
from phoneid_dev.access.policies import Decision, Grant, Resolved, Resolver, Roles, decide_request
from phoneid_dev.access.recording import StackFacts
from phoneid_dev.access.second_opinion import consult, policy_document
from phoneid_dev.template import Template, _CfnLoader, template

ACCOUNT = "123456789012"
REGION = "us-east-1"
TABLE_ARN = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/stack-Table"
KEY_ARN = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/key-1"
TEMPLATE = """
Resources:
  Table: {Type: AWS::DynamoDB::Table}
  Key: {Type: AWS::KMS::Key}
  StoreFunction:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Statement:
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:PutItem]
              Resource: !GetAtt Table.Arn
            - Effect: Allow
              Action: kms:Decrypt
              Resource: !GetAtt Key.Arn
              Condition:
                StringEquals: {kms:EncryptionContext:use: challenge}
            - Effect: Allow
              Action: kms:GenerateDataKey
              Resource: !GetAtt Key.Arn
              Condition:
                ForAllValues:StringEquals: {kms:EncryptionContextKeys: [clientId, use]}
"""
SMALL_STACK = StackFacts(
    name="stack",
    region=REGION,
    account=ACCOUNT,
    parameters={},
    refs={"Table": "stack-Table", "Key": "key-1"},
    attributes={"Table.Arn": TABLE_ARN, "Key.Arn": KEY_ARN},
)


def small_roles() -> Roles:
    return Roles(Template(yaml.load(TEMPLATE, Loader=_CfnLoader)))  # noqa: S506 - SafeLoader subclass


def records(stacks: list[StackFacts], calls: list[tuple[str, StackFacts, Request]]) -> Records:
    found = Records()
    for stack in stacks:
        found.add({"kind": "stack", "key": stack.key, **stack.to_json()})
    for function, stack, request in calls:
        found.add(
            {
                "kind": "call",
                "function": function,
                "service": request.action.split(":")[0],
                "operation": "X",
                "stack": stack.key,
                "requests": [request.to_json()],
                "test": "tests/t.py::test_it",
            }
        )
    return found


def small_check(*requests: Request) -> Check:
    return Check(
        small_roles(), records([SMALL_STACK], [("StoreFunction", SMALL_STACK, each) for each in requests])
    )


# --- the template's own grants, on a stack named as the local stack names its resources


def stack_of(parameters: Mapping[str, str]) -> StackFacts:
    """The real template's resources with the physical names and ARNs CloudFormation would give them."""
    refs: dict[str, str] = {}
    attributes: dict[str, str] = {}
    for logical_id, resource in template().document["Resources"].items():
        kind, name = str(resource.get("Type", "")), f"stack-{logical_id}"
        arn = f"arn:aws:{kind.split('::')[1].lower()}:{REGION}:{ACCOUNT}:{name}"
        refs[logical_id] = name
        if kind == "AWS::DynamoDB::Table":
            arn = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"
            attributes[f"{logical_id}.StreamArn"] = f"{arn}/stream/2026-01-01T00:00:00.000"
        elif kind == "AWS::KMS::Key":
            refs[logical_id] = f"{logical_id.lower()}-0000"
            arn = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{refs[logical_id]}"
        elif kind == "AWS::S3::Bucket":
            refs[logical_id] = name.lower()
            arn = f"arn:aws:s3:::{name.lower()}"
        elif kind == "AWS::SNS::Topic":
            refs[logical_id] = arn = f"arn:aws:sns:{REGION}:{ACCOUNT}:{name}"
            attributes |= {f"{logical_id}.TopicArn": arn, f"{logical_id}.TopicName": name}
        elif kind == "AWS::SQS::Queue":
            refs[logical_id] = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}"
            arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"
            attributes |= {f"{logical_id}.QueueName": name, f"{logical_id}.QueueUrl": refs[logical_id]}
        elif kind == "AWS::Serverless::Function":
            arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}"
        elif kind == "AWS::Serverless::StateMachine":
            refs[logical_id] = arn = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{name}"
            attributes[f"{logical_id}.Name"] = name
        elif kind == "AWS::Transfer::Server":
            attributes[f"{logical_id}.ServerId"] = f"s-{logical_id.lower()}"
        attributes[f"{logical_id}.Arn"] = arn
    return StackFacts("stack", REGION, ACCOUNT, dict(parameters), refs, attributes)


_MULTIVALUED = {"dynamodb:attributes", "kms:encryptioncontextkeys"}


def _concrete(pattern: str) -> str:
    return pattern if pattern == "*" else re.sub(r"[*?]", "x", pattern)


def _satisfying(resolved: Resolved) -> dict[str, Any]:
    """A context meeting the statement's conditions (a negated test: a value it does not name)."""
    context: dict[str, Any] = {}
    for operator, key, values in resolved.condition:
        qualifier, _, base = operator.rpartition(":")
        base = base.removesuffix("IfExists")
        if base == "Null":
            if values[0].lower() == "false":
                context[key] = "x"
            continue
        chosen = ["another-value"] if "Not" in base else [_concrete(value) for value in values]
        context[key] = tuple(chosen) if (qualifier or key.lower() in _MULTIVALUED) else chosen[0]
    return context


def requests_of_grants(statements: list[Resolved]) -> Iterator[Request]:
    """Each action of each statement on each of its resources: with a context meeting its conditions,
    with none, with each key's value changed, and on a resource of another account."""
    for resolved in statements:
        context = _satisfying(resolved)
        for action in resolved.statement.actions or ():
            if "*" in action or "?" in action:
                continue
            for pattern, _ in resolved.resources:
                resource = _concrete(pattern)
                yield Request(action, resource, context)
                yield Request(action, resource)
                for key, value in context.items():
                    changed = ("another-value",) if isinstance(value, tuple) else "another-value"
                    yield Request(action, resource, {**context, key: changed})
                if ACCOUNT in resource:
                    yield Request(action, resource.replace(ACCOUNT, "210987654321"), context)


def test_the_simulator_agrees_with_the_check_on_every_grant_of_the_template() -> None:
    # Given every grant of every function's role, on a sandbox stack and on a production stack with the
    # operator's secret (each tier's Fn::If branches), as requests allowed and denied
    roles = Roles(template())
    defaults = roles.parameter_choices()[0]
    stacks = [
        stack_of(defaults),
        stack_of({**defaults, "Tier": "production", "CamaraCredentialsSecret": "operator-secret"}),
    ]
    calls = []
    decided = set()
    roles_seen = set()
    for stack in stacks:
        resolver = Resolver(stack)
        for function in roles.functions:
            statements = [Resolved.of(s, resolver) for s in roles.statements(function, stack.parameters)]
            role = json.dumps([function, policy_document(statements)])
            if role in roles_seen:
                continue  # the same role on both stacks: decided once
            roles_seen.add(role)
            for request in {
                json.dumps(each.to_json()): each for each in requests_of_grants(statements)
            }.values():
                calls.append((function, stack, request))
                decided.add(decide_request(statements, request).allowed)

    # When the simulator decides them again
    opinion = consult(Check(roles, records(stacks, calls)))

    # Then it decides each as the check does, the allowed and the denied alike
    assert decided == {True, False}
    assert opinion.error is None
    assert opinion.disagreements == []
    assert opinion.refused == {}
    assert opinion.requests > 500
    assert opinion.lines()[-1] == "it agrees on every request"


def test_a_kms_encryption_context_condition_is_decided_alike() -> None:
    # Given a role that opens only challenges' data keys, and makes data keys with two context keys only
    challenge = {"kms:EncryptionContext:use": "challenge", "kms:EncryptionContext:clientId": "c1"}
    requests = [
        Request("kms:Decrypt", KEY_ARN, challenge),
        Request("kms:Decrypt", KEY_ARN, {**challenge, "kms:EncryptionContext:use": "identity"}),
        Request("kms:Decrypt", KEY_ARN),
        Request("kms:GenerateDataKey", KEY_ARN, {"kms:EncryptionContextKeys": ("clientId", "use")}),
        Request("kms:GenerateDataKey", KEY_ARN, {"kms:EncryptionContextKeys": ("phone", "use")}),
    ]
    check = small_check(*requests)
    statements = check._statements("StoreFunction", SMALL_STACK.key)
    assert [decide_request(statements, each).allowed for each in requests] == [
        True,
        False,
        False,
        True,
        False,
    ]

    # When the simulator decides them
    opinion = consult(check)

    # Then it agrees on each: the use in the context opens the key, another use or none does not
    assert (opinion.error, opinion.disagreements, opinion.refused) == (None, [], {})
    assert opinion.requests == len(requests)


@pytest.mark.parametrize(
    ("request_", "planted", "simulator"),
    [
        (
            Request("dynamodb:DeleteItem", TABLE_ARN),
            Decision(True, (Grant("StoreFunction", "dynamodb:DeleteItem", TABLE_ARN),)),
            "ImplicitlyDenied",
        ),
        (
            Request("dynamodb:GetItem", TABLE_ARN),
            Decision(False, reason="no statement allows dynamodb:GetItem"),
            "Allowed; Policies[0].Statement[0] (Allow) applies",
        ),
    ],
    ids=["our-evaluator-allows-what-the-policy-does-not", "our-evaluator-denies-what-the-policy-allows"],
)
def test_a_disagreement_fails_the_check_naming_both_decisions(
    monkeypatch: pytest.MonkeyPatch, request_: Request, planted: Decision, simulator: str
) -> None:
    # Given our evaluator made wrong about one request (as a fault in it would)
    honest = decide_request

    def faulty(statements: list[Resolved], request: Request) -> Decision:
        return planted if request == request_ else honest(statements, request)

    monkeypatch.setattr(second_opinion, "decide_request", faulty)
    check = small_check(request_, Request("dynamodb:PutItem", TABLE_ARN, {"dynamodb:Attributes": ("pk",)}))

    # When the check's report has the second opinion
    report = check.run(judge_unused=False)
    report.second_opinion = consult(check)

    # Then the check fails on that request alone, with the function, the action, the resource, both
    # decisions, the stack and the test
    assert not report.ok
    [disagreement] = report.second_opinion.disagreements
    ours = (
        "allowed by dynamodb:DeleteItem on " + TABLE_ARN if planted.allowed else f"denied: {planted.reason}"
    )
    assert disagreement.ours == ours
    assert disagreement.theirs == simulator
    assert (
        f"Requests it decides otherwise than the check (1):\n"
        f"  StoreFunction  {request_.action}  on {TABLE_ARN}\n"
        f"      check: {ours}\n"
        f"      simulator: {simulator}\n"
        f"      stack: \n"
        f"      test: tests/t.py::test_it"
    ) in report.text()


def test_a_failed_condition_is_explained_by_the_simulator(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given our evaluator made to open an identity record's data key with a role that opens challenges'
    opening = Request("kms:Decrypt", KEY_ARN, {"kms:EncryptionContext:use": "identity"})
    monkeypatch.setattr(
        second_opinion, "decide_request", lambda statements, request: Decision(True, (Grant("F", "a", "r"),))
    )

    # When the simulator decides it
    [disagreement] = consult(small_check(opening)).disagreements

    # Then it says which statement named the action and which condition failed
    assert disagreement.theirs == (
        "ImplicitlyDenied; Policies[0].Statement[1] (Allow) does not apply: "
        "StringEquals kms:EncryptionContext:use fails"
    )


def test_a_request_the_simulator_cannot_evaluate_fails_the_check() -> None:
    # Given a request of an action IAM does not have
    check = small_check(Request("dynamodb:GetItems", TABLE_ARN))

    # When the simulator is asked
    opinion = consult(check)

    # Then it is not taken as agreement
    assert not opinion.ok
    [(refused, test)] = opinion.refused.items()
    assert refused.startswith(f"StoreFunction  dynamodb:GetItems  on {TABLE_ARN}: ")
    assert "invalid.action" in refused
    assert test == "tests/t.py::test_it"


def test_no_node_fails_the_check_saying_what_to_install() -> None:
    # When node cannot be found
    check = small_check(Request("dynamodb:GetItem", TABLE_ARN))
    report = check.run(judge_unused=False)
    report.second_opinion = consult(check, node="/nonexistent/node")

    # Then the check fails, saying why
    assert not report.ok
    assert (
        "The second opinion (@cloud-copilot/iam-simulate) could not be had: '/nonexistent/node' was not "
        "found: the second opinion runs @cloud-copilot/iam-simulate in Node.js (install Node.js 20, then "
        "`npm ci` in the repository)"
    ) in report.text()


@pytest.mark.parametrize(
    ("script", "error"),
    [
        (
            "process.stderr.write('Cannot find package @cloud-copilot/iam-simulate\\n'); process.exit(3)",
            "failed (exit status 3; is @cloud-copilot/iam-simulate installed? `npm ci`):\n"
            "        Cannot find package @cloud-copilot/iam-simulate",
        ),
        ("process.stdout.write('{\"decisions\": []}')", "it answered for 0 of 1 requests"),
        ("process.stdout.write('Allowed')", "printed no JSON: 'Allowed'"),
    ],
    ids=["it-fails", "it-answers-for-fewer-requests", "it-prints-no-json"],
)
def test_a_simulator_that_fails_or_answers_wrongly_fails_the_check(
    tmp_path: Path, script: str, error: str
) -> None:
    simulate = tmp_path / "simulate.mjs"
    simulate.write_text(script)

    opinion = consult(small_check(Request("dynamodb:GetItem", TABLE_ARN)), simulate=simulate)

    assert not opinion.ok
    assert opinion.error is not None
    assert error in opinion.error


def test_the_gate_has_the_second_opinion_and_a_flag_leaves_it_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a run's records: the token function reading a client, on a stack of the real template
    stack = stack_of(Roles(template()).parameter_choices()[0])
    read = Request(
        "dynamodb:GetItem", stack.attributes["ClientsTable.Arn"], {"dynamodb:Select": "ALL_ATTRIBUTES"}
    )
    lines = [{"kind": "stack", "key": stack.key, **stack.to_json()}]
    lines.append(
        {
            "kind": "call",
            "function": "TokenFunction",
            "service": "dynamodb",
            "operation": "GetItem",
            "stack": stack.key,
            "requests": [read.to_json()],
            "test": "tests/t.py::test_it",
        }
    )
    (tmp_path / "1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))

    # When the check runs as the gate runs it, and with --no-second-opinion
    assert main([str(tmp_path)]) == 0
    gate = capsys.readouterr().out
    assert main([str(tmp_path), "--no-second-opinion"]) == 0
    without = capsys.readouterr().out

    # Then the gate's report has the simulator's verdict, the other not
    assert "Second opinion: @cloud-copilot/iam-simulate " in gate
    assert " on 1 distinct requests (1 simulated), identity policies only" in gate
    assert "it agrees on every request" in gate
    assert "Second opinion" not in without


def test_a_report_without_the_second_opinion_is_judged_on_the_check_alone() -> None:
    assert Report().ok


def test_a_request_of_one_role_on_two_stacks_is_simulated_once_and_judged_on_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the same request on two stacks whose role resolves alike, and our evaluator made wrong on it
    other = StackFacts("other", REGION, ACCOUNT, {}, SMALL_STACK.refs, SMALL_STACK.attributes)
    deleting = Request("dynamodb:DeleteItem", TABLE_ARN)
    monkeypatch.setattr(
        second_opinion, "decide_request", lambda statements, request: Decision(True, (Grant("F", "a", "r"),))
    )
    check = Check(
        small_roles(),
        records(
            [SMALL_STACK, other],
            [("StoreFunction", SMALL_STACK, deleting), ("StoreFunction", other, deleting)],
        ),
    )

    # When the simulator is asked
    opinion = consult(check)

    # Then it simulates the request once, and the disagreement is the check's on each stack
    assert (opinion.requests, opinion.simulated) == (2, 1)
    assert len(opinion.disagreements) == 2


# (operator, key, values) of a condition on dynamodb:GetItem; each request's context; IAM's decision
OPERATOR_CASES = [
    # An absent key matches nothing: a negated operator holds, the others do not (nor ForAnyValue)
    ("StringNotEquals", "dynamodb:Select", ["ALL_ATTRIBUTES"], {}, True),
    ("StringNotLike", "dynamodb:Select", ["ALL_*"], {}, True),
    ("ArnNotLike", "aws:SourceArn", ["arn:aws:lambda:*:*:function:x*"], {}, True),
    ("NumericNotEquals", "aws:MultiFactorAuthAge", ["3600"], {}, True),
    ("StringEquals", "dynamodb:Select", ["ALL_ATTRIBUTES"], {}, False),
    ("ForAnyValue:StringNotEquals", "dynamodb:Attributes", ["pk"], {}, False),
    ("ForAllValues:StringNotEquals", "dynamodb:Attributes", ["pk"], {}, True),
    ("StringNotEquals", "dynamodb:Select", ["ALL_ATTRIBUTES"], {"dynamodb:Select": "ALL_ATTRIBUTES"}, False),
    # A multivalued key wants ForAllValues or ForAnyValue: without one, nothing holds for it
    ("StringEquals", "dynamodb:Attributes", ["pk"], {"dynamodb:Attributes": ("pk",)}, False),
    ("StringLike", "dynamodb:Attributes", ["p*"], {"dynamodb:Attributes": ("pk", "status")}, False),
    ("StringNotEquals", "dynamodb:Attributes", ["pk"], {"dynamodb:Attributes": ("secret",)}, False),
    ("ForAnyValue:StringEquals", "dynamodb:Attributes", ["pk"], {"dynamodb:Attributes": ("pk", "x")}, True),
    ("ForAllValues:StringLike", "dynamodb:Attributes", ["p*"], {"dynamodb:Attributes": ("pk", "x")}, False),
]


def test_condition_operators_are_decided_as_iam_decides_them_by_both() -> None:
    # Given a role of one condition per function, and a request of each case
    functions = {
        f"F{number}": {
            "Type": "AWS::Serverless::Function",
            "Properties": {
                "Policies": [
                    {
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": "dynamodb:GetItem",
                                "Resource": TABLE_ARN,
                                "Condition": {operator: {key: values}},
                            }
                        ]
                    }
                ]
            },
        }
        for number, (operator, key, values, _, _) in enumerate(OPERATOR_CASES)
    }
    roles = Roles(Template({"Resources": functions}))
    calls = [
        (f"F{number}", SMALL_STACK, Request("dynamodb:GetItem", TABLE_ARN, context))
        for number, (_, _, _, context, _) in enumerate(OPERATOR_CASES)
    ]
    check = Check(roles, records([SMALL_STACK], calls))

    # When both decide them
    ours = [
        decide_request(check._statements(function, SMALL_STACK.key), request).allowed
        for function, _, request in calls
    ]
    opinion = consult(check)

    # Then each is decided as IAM documents it, by both
    assert ours == [allowed for *_, allowed in OPERATOR_CASES]
    assert (opinion.error, opinion.disagreements, opinion.refused) == (None, [], {})
