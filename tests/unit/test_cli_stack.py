"""Operator commands against a deployed stack: the settings come from CloudFormation."""

from __future__ import annotations

import boto3
from botocore.stub import Stubber

from phoneid.config import Settings
from phoneid_cli.adapters.cloudformation import CloudFormationStacks
from phoneid_dev.template import template


def test_a_deployed_stacks_environment_is_complete() -> None:
    # Given CloudFormation describing a deployed production stack and its resources
    client = boto3.client("cloudformation", region_name="us-east-1")
    stubber = Stubber(client)
    resources = sorted(template().resources)
    stubber.add_response(
        "describe_stacks",
        {
            "Stacks": [
                {
                    "StackName": "phoneid-prod",
                    "CreationTime": "2026-11-01T00:00:00Z",
                    "StackStatus": "CREATE_COMPLETE",
                    "Parameters": [
                        {"ParameterKey": "Tier", "ParameterValue": "production"},
                        {"ParameterKey": "Region", "ParameterValue": "EU"},
                    ],
                }
            ]
        },
        {"StackName": "phoneid-prod"},
    )
    stubber.add_response(
        "list_stack_resources",
        {
            "StackResourceSummaries": [
                {
                    "LogicalResourceId": name,
                    "PhysicalResourceId": f"physical-{name}",
                    "ResourceType": "AWS::Test",
                    "LastUpdatedTimestamp": "2026-11-01T00:00:00Z",
                    "ResourceStatus": "CREATE_COMPLETE",
                }
                for name in resources
            ]
        },
        {"StackName": "phoneid-prod"},
    )
    stubber.activate()

    # When the CLI resolves the functions' environment
    environment = CloudFormationStacks(client).environment("phoneid-prod")

    # Then the settings load from it, pointing at the stack's own resources
    settings = Settings.from_env(environment)
    assert (settings.tier, settings.region) == ("production", "EU")
    assert settings.clients_table == "physical-ClientsTable"
    assert settings.enrollments_table == "physical-EnrollmentsTable"
    assert settings.pii_key_id == "physical-PiiKey"
    # and boto3's endpoint, empty in AWS, is not set over the one the operator's shell may have
    assert "AWS_ENDPOINT_URL" not in environment
