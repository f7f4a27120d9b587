"""What the check needs of a stack beside its calls: its parameters, physical names and ARNs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack


@dataclass(frozen=True)
class StackFacts:
    """What the check needs of a stack to resolve the template's policies as CloudFormation would."""

    name: str
    region: str
    account: str
    parameters: Mapping[str, str]  # every parameter, defaults included
    refs: Mapping[str, str]  # logical id -> what Ref gives
    attributes: Mapping[str, str]  # "Logical.Attribute" -> what Fn::GetAtt gives
    endpoints: Mapping[str, str] = field(default_factory=dict)  # local endpoint -> the AWS one it stands for
    bucket_keys: Mapping[str, str] = field(default_factory=dict)  # bucket -> its default KMS key's ARN

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "region": self.region,
            "account": self.account,
            "parameters": dict(self.parameters),
            "refs": dict(self.refs),
            "attributes": dict(self.attributes),
            "endpoints": dict(self.endpoints),
            "bucket_keys": dict(self.bucket_keys),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StackFacts:
        return cls(
            name=str(data["name"]),
            region=str(data["region"]),
            account=str(data["account"]),
            parameters=dict(data["parameters"]),
            refs=dict(data["refs"]),
            attributes=dict(data["attributes"]),
            endpoints=dict(data.get("endpoints") or {}),
            bucket_keys=dict(data.get("bucket_keys") or {}),
        )

    @cached_property
    def key(self) -> str:
        """Names the stack in the records of its calls (worked out once: every recorded call asks)."""
        canonical = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(canonical).hexdigest()[:16]


def facts_of(stack: LocalStack) -> StackFacts:
    """``stack`` as the check sees it (kept on the stack once it is complete)."""
    size = (len(stack.physical_ids), len(stack.attributes))
    kept: tuple[tuple[int, int], StackFacts] | None = stack.__dict__.get("_access_facts")
    if kept is not None and kept[0] == size:
        return kept[1]
    function_environment = {
        name: value
        for function in stack.template.functions.values()
        for name, value in function.environment.items()
    }
    facts = StackFacts(
        name=stack.name,
        region=stack.aws_region,
        account=stack.account_id,
        parameters={**stack.template.parameter_defaults(), **stack.parameters},
        refs=dict(stack.physical_ids),
        attributes={f"{logical_id}.{name}": value for (logical_id, name), value in stack.attributes.items()},
        endpoints={
            local: stack.resolve(function_environment[name])
            for name, local in stack.overrides.items()
            if name in function_environment and local.startswith("http")
        },
        bucket_keys=_bucket_keys(stack),
    )
    stack.__dict__["_access_facts"] = (size, facts)
    return facts


def _bucket_keys(stack: LocalStack) -> dict[str, str]:
    """Each bucket encrypted by default with a KMS key of the template, and that key's ARN."""
    found = {}
    for logical_id, props in stack.template.of_type("AWS::S3::Bucket").items():
        rules = (props.get("BucketEncryption") or {}).get("ServerSideEncryptionConfiguration") or []
        for rule in rules:
            default = rule.get("ServerSideEncryptionByDefault") or {}
            if default.get("SSEAlgorithm") == "aws:kms" and "KMSMasterKeyID" in default:
                found[stack.physical_ids[logical_id]] = str(stack.resolve(default["KMSMasterKeyID"]))
    return found
