"""The access check catches each small widening of a real grant of template.yaml: a resource widened
to ``*`` or to every table, a condition dropped, a condition key the action does not support, an
action removed, an action added; and the operator's secret grant matches that secret only.

The calls are a sample the suite recorded (``access_records/sample.jsonl``): a Connect file
delivered and one rejected, a production challenge, Mobile Auth with an operator, an Identity
Manager enrolment. To record it again (after a change to the stack's resources, say)::

    rm -rf /tmp/sample && PHONEID_ACCESS_RECORDS=/tmp/sample pytest -q -n 0 $(python -c \
      "from tests.unit.test_access_mutations import SAMPLE_TESTS; print(*SAMPLE_TESTS)")
    cat /tmp/sample/*.jsonl > tests/unit/access_records/sample.jsonl
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from phoneid_dev.access.check import Check, Records, Report
from phoneid_dev.access.policies import Roles
from phoneid_dev.template import Template, template

RECORDS = Path(__file__).parent / "access_records"
SAMPLE_TESTS = (
    "tests/integration/test_connect_workflow.py::test_a_file_put_under_upload_is_verified_delivered_and_emailed",
    "tests/integration/test_connect_workflow.py::"
    "test_a_file_with_the_wrong_enroll_key_is_rejected_with_a_file_and_an_email",
    "tests/integration/test_staged_production.py::"
    "test_production_challenge_returns_the_identity_with_the_last_four_of_the_ssn",
    "tests/integration/test_mobile_auth_camara.py::test_the_devices_own_number_passes_without_sms",
    "tests/integration/test_identity_manager.py::"
    "test_enroll_answers_a_random_service_id_and_get_returns_the_identity",
)


@dataclass(frozen=True)
class RealGrant:
    """One statement of a role in template.yaml, found by its action and what its resource names."""

    function: str
    action: str  # one action the statement grants, and calls in the sample use
    names: str  # a text of its resource as the template writes it (a logical id)
    unused_action: str  # an action to add, which no call of the function uses

    def __str__(self) -> str:
        return f"{self.function}-{self.action}"


SESSIONS_PUT = RealGrant("StartFunction", "dynamodb:PutItem", "SessionsTable", "dynamodb:DeleteItem")
PII_DECRYPT = RealGrant("ChallengeFunction", "kms:Decrypt", "PiiKey", "kms:Encrypt")
CONNECT_KEY = RealGrant("ConnectValidateFunction", "kms:Decrypt", "ConnectKey", "kms:ReEncryptFrom")
LIST_WORK = RealGrant("ConnectDeliverFunction", "s3:ListBucket", "ConnectBucket", "s3:ListBucketVersions")
SECRET = RealGrant(
    "ClientMobileAuthFunction",
    "secretsmanager:GetSecretValue",
    "CamaraCredentialsSecret",
    "secretsmanager:PutSecretValue",
)
TOKEN_KEYS = RealGrant("AuthorizerFunction", "dynamodb:BatchGetItem", "TokenKeysTable", "dynamodb:Scan")
SEND_EMAIL = RealGrant("ConnectDeliverFunction", "ses:SendEmail", "ConnectEmailSender", "ses:SendRawEmail")
GRANTS = [SESSIONS_PUT, PII_DECRYPT, CONNECT_KEY, LIST_WORK, TOKEN_KEYS, SEND_EMAIL]
CONDITIONED = [PII_DECRYPT, CONNECT_KEY, LIST_WORK, TOKEN_KEYS, SEND_EMAIL]


@cache
def records() -> Records:
    return Records.read(RECORDS)


@cache
def baseline(unused: bool) -> frozenset[str]:
    return frozenset(report_of(template().document, unused).text().splitlines())


def report_of(document: Any, unused: bool = False) -> Report:
    """The check's report; ``unused``: unused grants judged too (on a sample, many are unused)."""
    return Check(Roles(Template(document)), records()).run(judge_unused=unused)


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement.get("Action") or []
    return [actions] if isinstance(actions, str) else list(actions)


def _found(grant: RealGrant, node: Any) -> bool:
    return (
        isinstance(node, dict)
        and grant.action in _actions(node)
        and grant.names in repr(node.get("Resource"))
        and "Effect" in node
    )


def _replace(grant: RealGrant, node: Any, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> bool:
    """``grant``'s statement, wherever it is under ``node`` (a statement list, an Fn::If branch),
    replaced by ``change``'s copy of it; None removes it (an Fn::If branch becomes AWS::NoValue)."""
    children = (
        list(node.items())
        if isinstance(node, dict)
        else list(enumerate(node))
        if isinstance(node, list)
        else []
    )
    for key, child in children:
        if _found(grant, child):
            changed = change(copy.deepcopy(child))
            if changed is not None:
                node[key] = changed
            elif isinstance(node, list) and not (len(node) == 3 and isinstance(node[0], str)):
                del node[key]
            else:
                node[key] = {"Ref": "AWS::NoValue"}
            return True
        if _replace(grant, child, change):
            return True
    return False


def mutated(grant: RealGrant, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Any:
    """template.yaml with ``grant``'s statement replaced by ``change``'s copy of it (None: removed).
    The statement is copied first: YAML aliases share it with other roles, which keep theirs."""
    document = copy.deepcopy(dict(template().document))
    if not _replace(grant, document["Resources"][grant.function]["Properties"]["Policies"], change):
        raise AssertionError(f"no statement of {grant.function} grants {grant.action} on {grant.names}")
    return document


def new_lines(document: Any, unused: bool = False) -> list[str]:
    """What the check reports of the mutated template that it does not report of the real one."""
    report = report_of(document, unused)
    assert not report.ok
    return [line for line in report.text().splitlines() if line not in baseline(unused)]


def names(lines: list[str], grant: RealGrant, action: str | None = None) -> bool:
    return any(f"{grant.function}  {action or grant.action}  " in line for line in lines)


def test_the_real_template_passes_every_rule_on_the_sample() -> None:
    report = report_of(template().document)

    assert not report.denied, report.text()
    assert not report.unchecked, report.text()
    assert not report.rules, report.text()


@pytest.mark.parametrize("grant", GRANTS, ids=str)
def test_a_resource_widened_to_star_fails_naming_the_grant(grant: RealGrant) -> None:
    lines = new_lines(mutated(grant, lambda s: {**s, "Resource": "*"}))

    assert names(lines, grant), lines
    assert any(f"{grant.function}  {grant.action}  on *: wider than" in line for line in lines), lines


def test_a_table_grant_widened_to_every_table_fails_naming_the_grant() -> None:
    every_table = {"Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/*"}

    lines = new_lines(mutated(SESSIONS_PUT, lambda s: {**s, "Resource": every_table}))

    assert any("StartFunction  dynamodb:PutItem  on table/*: wider than" in line for line in lines), lines


@pytest.mark.parametrize("grant", CONDITIONED, ids=str)
def test_a_condition_dropped_fails_naming_the_grant(grant: RealGrant) -> None:
    def drop(statement: dict[str, Any]) -> dict[str, Any]:
        assert statement.pop("Condition")
        return statement

    lines = new_lines(mutated(grant, drop))

    assert names(lines, grant), lines


@pytest.mark.parametrize("grant", GRANTS, ids=str)
def test_a_condition_key_the_action_does_not_support_fails_naming_the_grant(grant: RealGrant) -> None:
    def add_key(statement: dict[str, Any]) -> dict[str, Any]:
        condition = copy.deepcopy(statement.get("Condition") or {})
        condition.setdefault("StringEquals", {})["ec2:InstanceType"] = "t4g.nano"
        return {**statement, "Condition": condition}

    lines = new_lines(mutated(grant, add_key))

    assert any(
        f"{grant.function}  {grant.action}  " in line and "condition key ec2:InstanceType is not one" in line
        for line in lines
    ), lines


@pytest.mark.parametrize("grant", GRANTS, ids=str)
def test_an_action_removed_fails_naming_the_refused_call(grant: RealGrant) -> None:
    def remove(statement: dict[str, Any]) -> dict[str, Any] | None:
        rest = [action for action in _actions(statement) if action != grant.action]
        return {**statement, "Action": rest} if rest else None

    report = report_of(mutated(grant, remove))

    assert any(d.function == grant.function and d.action == grant.action for d in report.denied), (
        report.text()
    )
    assert f"{grant.function}  {grant.action}  on " in report.text()
    assert "      test: tests/integration/" in report.text()  # the test that made the refused call


@pytest.mark.parametrize("grant", GRANTS, ids=str)
def test_an_action_added_fails_naming_the_grant(grant: RealGrant) -> None:
    def add(statement: dict[str, Any]) -> dict[str, Any]:
        return {**statement, "Action": [*_actions(statement), grant.unused_action]}

    lines = new_lines(mutated(grant, add), unused=True)

    assert names(lines, grant, grant.unused_action), lines


def test_the_operator_secret_grant_matching_longer_names_fails() -> None:
    def any_suffix(statement: dict[str, Any]) -> dict[str, Any]:
        resource = statement["Resource"]["Fn::Sub"]
        return {**statement, "Resource": {"Fn::Sub": resource.replace("-??????", "*")}}

    lines = new_lines(mutated(SECRET, any_suffix))

    assert any(
        "ClientMobileAuthFunction  secretsmanager:GetSecretValue  on secret:${CamaraCredentialsSecret}*: "
        "wider than its calls"
        in line
        and "secret:operator-probe-" in line
        for line in lines
    ), lines
