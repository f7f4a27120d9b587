"""What the bench reads of the stack's template: each function's memory, the authorizers' cache,
the keys billed at the asymmetric rate."""

from __future__ import annotations

from phoneid_dev.stack import LocalStack
from phoneid_dev.template import Template


def function_memory(template: Template) -> dict[str, int]:
    """Each function's configured memory (MB): its own MemorySize, or the Globals' one."""
    default = int(template.document.get("Globals", {}).get("Function", {}).get("MemorySize", 128))
    return {
        name: int(props.get("MemorySize", default))
        for name, props in template.of_type("AWS::Serverless::Function").items()
    }


def authorizer_ttl_seconds(template: Template) -> dict[str, int]:
    """How long API Gateway keeps each authorizer's answer (``ReauthorizeEvery``; 300 s by default)."""
    _, api = template.api
    return {
        name: int(spec.get("Identity", {}).get("ReauthorizeEvery", 300))
        for name, spec in api["Auth"]["Authorizers"].items()
    }


def asymmetric_key_ids(stack: LocalStack) -> set[str]:
    """Ids and ARNs of the stack's keys billed at the asymmetric rate (all but symmetric, HMAC, RSA 2048)."""
    ids = set()
    for name, props in stack.template.of_type("AWS::KMS::Key").items():
        spec = str(props.get("KeySpec", "SYMMETRIC_DEFAULT"))
        if spec.startswith(("ECC_", "RSA_")) and spec != "RSA_2048":
            ids |= {stack.physical_ids[name], stack.attributes[(name, "Arn")]}
    return ids
