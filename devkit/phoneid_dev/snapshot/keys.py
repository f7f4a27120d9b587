"""The template's KMS keys kept across restarts: each key's id, ARN and material.

moto's ciphertext names the key it was made with (its id) and opens only with that key's material,
and KMS has no call that creates a key with a given id or exports material. So the material is read
from moto's KMS backend, and on the next start each key the template provisions takes the kept id,
ARN and material before anything reads the stack's environment (``LocalStack.kept_keys``).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from phoneid_dev.stack import LocalStack


def _backend(stack: LocalStack) -> Any:
    from moto.kms.models import kms_backends

    return kms_backends[stack.account_id][stack.aws_region]


def exported(stack: LocalStack) -> dict[str, dict[str, str]]:
    """Each of the template's keys by logical id: its id, ARN, spec and material (base64)."""
    keys = _backend(stack).keys
    kept = {}
    for logical_id in stack.template.of_type("AWS::KMS::Key"):
        key = keys[stack.physical_ids[logical_id]]
        if key.key_spec != "SYMMETRIC_DEFAULT" and not key.key_spec.startswith("HMAC_"):
            # An asymmetric key's private half is not its material: keeping one needs more than this.
            raise ValueError(f"{logical_id} is a {key.key_spec} key: only symmetric and HMAC keys are kept")
        kept[logical_id] = {
            "keyId": key.id,
            "arn": key.arn,
            "keySpec": key.key_spec,
            "material": base64.b64encode(key.key_material).decode(),
        }
    return kept


def adopt(stack: LocalStack, new_key_id: str, kept: dict[str, str]) -> tuple[str, str]:
    """The key just created as ``new_key_id`` made the kept key: its id, ARN and material (the
    template's spec and usage are the new key's, checked to be the kept one's). Its id and ARN."""
    backend = _backend(stack)
    key = backend.keys[new_key_id]
    if key.key_spec != kept["keySpec"]:
        raise ValueError(
            f"the kept key {kept['keyId']} is a {kept['keySpec']} key, the template's a {key.key_spec}"
        )
    del backend.keys[new_key_id]
    key.id, key.arn = kept["keyId"], kept["arn"]
    key.key_material = base64.b64decode(kept["material"])
    backend.keys[key.id] = key
    return key.id, key.arn
