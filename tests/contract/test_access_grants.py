"""template.yaml's roles keep the access check's static rules (what the template alone tells, before
the suite's calls are checked): each grant as narrow as AWS allows or explained in
Metadata.WideResources, every KMS grant bound to its use, every condition key one its action
supports."""

from __future__ import annotations

from phoneid_dev.access.check import check_static, main
from phoneid_dev.access.policies import Resolved, Resolver, Roles
from phoneid_dev.access.policies.conditions import glob
from phoneid_dev.access.recording import StackFacts
from phoneid_dev.template import template

ACCOUNT = "123456789012"
SECRETS = f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret"


def test_every_role_of_the_template_keeps_the_static_rules(capsys) -> None:  # type: ignore[no-untyped-def]
    report = check_static()

    assert report.ok, report.text()
    assert main(["--static"]) == 0
    assert "every grant as narrow as AWS allows or explained" in capsys.readouterr().out


def test_the_operator_secret_grant_matches_that_secret_only() -> None:
    roles = Roles(template())
    parameters = {**roles.parameter_choices()[0], "CamaraCredentialsSecret": "phoneid/operator"}
    stack = StackFacts("stack", "us-east-1", ACCOUNT, parameters, refs={}, attributes={})
    statements = [
        Resolved.of(statement, Resolver(stack))
        for statement in roles.statements("ClientMobileAuthFunction", parameters)
        if "secretsmanager:GetSecretValue" in (statement.actions or ())
    ]
    (pattern,) = [pattern for resolved in statements for pattern, _ in resolved.resources]

    assert glob(pattern).match(f"{SECRETS}:phoneid/operator-AbCdEf")
    assert not glob(pattern).match(f"{SECRETS}:phoneid/operator-other-AbCdEf")
    assert not glob(pattern).match(f"{SECRETS}:phoneid/operator2-AbCdEf")
