"""samconfig.toml deploys the four stacks as docs/operations.md describes them: one config environment
per tier and service region, each naming its stack and AWS region, with parameter overrides the
template accepts, read the way the SAM CLI reads them, and each one validated offline."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from samcli.cli.types import CfnParameterOverridesType
from samcli.lib.config.samconfig import SamConfig

from phoneid_dev.template import ROOT, template

STACKS = {
    "us-sandbox": {"Tier": "sandbox", "Region": "US"},
    "us-production": {"Tier": "production", "Region": "US"},
    "eu-sandbox": {"Tier": "sandbox", "Region": "EU"},
    "eu-production": {"Tier": "production", "Region": "EU"},
}


def document() -> dict[str, Any]:
    return tomllib.loads((ROOT / "samconfig.toml").read_text())


def resolved(environment: str, command: str) -> dict[str, Any]:
    """What `sam <command> --config-env <environment>` reads: the command's table over the global one."""
    return dict(SamConfig(str(ROOT)).get_all([command], "parameters", env=environment))


def overrides(environment: str) -> dict[str, str]:
    """The environment's parameter overrides, parsed by the SAM CLI's own option type."""
    value = resolved(environment, "deploy")["parameter_overrides"]
    parsed: dict[str, str] = CfnParameterOverridesType().convert(value, None, None)
    return parsed


def test_the_config_environments_are_exactly_the_four_stacks() -> None:
    # Given the config file as TOML
    environments = set(document()) - {"version", "default"}

    # Then there is one environment per tier and service region, and nothing else
    assert environments == set(STACKS)
    # And the shared tables hold only what does not depend on the stack
    assert set(document()["default"]) == {"build", "validate"}


@pytest.mark.parametrize("environment", sorted(STACKS))
def test_each_stack_names_its_stack_region_and_deploy_settings(environment: str) -> None:
    # When `sam deploy --config-env <environment>` reads its settings
    deploy = resolved(environment, "deploy")

    # Then the stack, its AWS region and the settings a first deploy needs are all there
    assert re.fullmatch(r"phoneid-(sandbox|production)-(us|eu)", deploy["stack_name"])
    assert re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d", deploy["region"])
    assert deploy["capabilities"] == "CAPABILITY_IAM"
    assert deploy["resolve_s3"] is True
    # And `sam validate --config-env <environment>` lints (cfn-lint, offline) for that AWS region
    assert resolved(environment, "validate")["lint"] is True
    # And `sam delete`/`sam validate` of the environment act on the same stack and region
    for command in ("delete", "validate"):
        assert resolved(environment, command)["stack_name"] == deploy["stack_name"]
        assert resolved(environment, command)["region"] == deploy["region"]


def test_no_two_stacks_share_a_name() -> None:
    names = [resolved(environment, "deploy")["stack_name"] for environment in STACKS]

    assert len(set(names)) == len(names)


@pytest.mark.parametrize("environment", sorted(STACKS))
def test_each_stack_sets_its_tier_and_region_and_only_what_the_template_accepts(environment: str) -> None:
    # Given the template's parameters and the environment's overrides
    declared = template().document["Parameters"]
    values = overrides(environment)

    # Then the tier and service region are the environment's
    assert {name: values.get(name) for name in ("Tier", "Region")} == STACKS[environment]
    # And every override names a parameter of the template, with a value it allows
    for name, value in values.items():
        assert name in declared, name
        assert allowed(declared[name], value), (name, value)


def allowed(spec: dict[str, Any], value: str) -> bool:
    """Whether CloudFormation would take ``value`` for a parameter declared as ``spec``."""
    if "AllowedValues" in spec and value not in [str(option) for option in spec["AllowedValues"]]:
        return False
    if "AllowedPattern" in spec and not re.fullmatch(spec["AllowedPattern"], value):
        return False
    if spec["Type"] == "Number":
        if not re.fullmatch(r"-?\d+(\.\d+)?", value):
            return False
        number = float(value)
        return spec.get("MinValue", number) <= number <= spec.get("MaxValue", number)
    return True


def test_production_stacks_reserve_concurrency_and_the_template_does_not_by_default() -> None:
    # A first deploy of the template's defaults needs no concurrency quota a new account may lack
    assert template().parameter_defaults()["ReservedConcurrency"] == "disabled"
    # while the production stacks cap each function, as the operator asks for explicitly
    for environment, stack in STACKS.items():
        expected = "enabled" if stack["Tier"] == "production" else None
        assert overrides(environment).get("ReservedConcurrency") == expected, environment


def validate_settings(environment: str) -> dict[str, Any]:
    """What `sam validate --config-env <environment>` acts on: its settings but the stack's name, which
    validating a template does not use."""
    return {name: value for name, value in resolved(environment, "validate").items() if name != "stack_name"}


def one_environment_of_each_validate_settings() -> list[str]:
    """An environment for each set of validate settings: `sam validate` of another environment with
    the same settings would lint the same template the same way again."""
    chosen: list[str] = []
    for environment in sorted(STACKS):
        if validate_settings(environment) not in [validate_settings(each) for each in chosen]:
            chosen.append(environment)
    return chosen


VALIDATED = one_environment_of_each_validate_settings()


def test_every_environment_validates_as_one_the_next_test_runs() -> None:
    # Every environment's validate settings are those of an environment validated below
    for environment in STACKS:
        assert validate_settings(environment) in [validate_settings(each) for each in VALIDATED], environment
    # and every AWS region of the four stacks is linted
    regions = {resolved(environment, "deploy")["region"] for environment in STACKS}
    assert {validate_settings(each)["region"] for each in VALIDATED} == regions


@pytest.mark.parametrize("environment", VALIDATED)
def test_each_stack_validates_offline_in_its_aws_region(environment: str, tmp_path: Path) -> None:
    # Given no AWS credentials at all (sam validate without --lint would call IAM and fail)
    offline = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SAM_CLI_TELEMETRY": "0",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
    }

    # When the operator's `sam validate --config-env <environment>` runs
    result = subprocess.run(  # noqa: S603 - the SAM CLI of this environment, on our own template
        [str(Path(sys.executable).with_name("sam")), "validate", "--config-env", environment],
        cwd=ROOT,
        env=offline,
        capture_output=True,
        text=True,
        check=False,
    )

    # Then the template lints clean for that AWS region (cfn-lint, not SAM's basic check), with no AWS call
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is a valid SAM Template" in result.stdout
    assert "basic SAM Validation" not in result.stdout


def test_the_operations_doc_lists_the_four_stacks_as_configured() -> None:
    # Given the table of config environments in docs/operations.md
    text = (ROOT / "docs" / "operations.md").read_text()
    rows = {
        found["environment"]: (found["stack"], found["region"], found["tier"], found["service"])
        for found in re.finditer(
            r"^\| `(?P<environment>[a-z]+-[a-z]+)` \| `(?P<stack>[a-z-]+)` \| `(?P<region>[a-z0-9-]+)` "
            r"\| `(?P<tier>\w+)` \| `(?P<service>\w+)` \|",
            text,
            re.MULTILINE,
        )
    }

    # Then it is the config file's
    assert rows == {
        environment: (
            resolved(environment, "deploy")["stack_name"],
            resolved(environment, "deploy")["region"],
            overrides(environment)["Tier"],
            overrides(environment)["Region"],
        )
        for environment in STACKS
    }
