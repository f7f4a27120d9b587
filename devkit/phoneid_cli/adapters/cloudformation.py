"""Deployed stacks as CloudFormation describes them: their functions' environment and their outputs."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Protocol


class DeployedStacks(Protocol):
    def environment(self, stack_name: str) -> dict[str, str]: ...

    def outputs(self, stack_name: str) -> dict[str, str]: ...


class CloudFormationStacks:
    """``client``: a CloudFormation client (by default boto3's, made on first use)."""

    def __init__(self, client: Any = None) -> None:
        if client is not None:
            self.__dict__["client"] = client

    @cached_property
    def client(self) -> Any:
        import boto3

        return boto3.client("cloudformation")

    def environment(self, stack_name: str) -> dict[str, str]:
        """The functions' environment of a deployed stack, resolved from its parameters and resources."""
        from phoneid_dev.stack import ENDPOINT_VARIABLE, LocalStack

        described = self.client.describe_stacks(StackName=stack_name)["Stacks"][0]
        parameters = {p["ParameterKey"]: p["ParameterValue"] for p in described.get("Parameters", [])}
        resolver = LocalStack(parameters=parameters, name=stack_name)
        for page in self.client.get_paginator("list_stack_resources").paginate(StackName=stack_name):
            for resource in page["StackResourceSummaries"]:
                resolver.physical_ids[resource["LogicalResourceId"]] = resource["PhysicalResourceId"]
        # Every function's variables (the settings need all of them), as CloudFormation resolved them;
        # not boto3's endpoint, empty in AWS, which would replace one this shell sets.
        environment: dict[str, str] = {}
        for function in resolver.template.functions.values():
            for name, value in function.environment.items():
                try:
                    environment[name] = resolver.resolve(value)
                except KeyError:  # an attribute only the resource knows (a stream's ARN): no command reads it
                    continue
        environment.pop(ENDPOINT_VARIABLE, None)
        return environment

    def outputs(self, stack_name: str) -> dict[str, str]:
        described = self.client.describe_stacks(StackName=stack_name)["Stacks"][0]
        return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}
