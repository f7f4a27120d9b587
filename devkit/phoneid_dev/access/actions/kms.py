"""KMS's operations as IAM authorizes them: on the key (by its ARN or alias), with the encryption
context as condition keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack, Value

MAPPERS = Mappers()

_KEY_ID_LENGTH = 36  # moto's ciphertexts start with the key's id


def _key_arn(call: Call, key_id: str) -> str:
    if key_id.startswith("arn:"):
        return key_id
    name = key_id if key_id.startswith("alias/") else f"key/{key_id}"
    return f"arn:aws:kms:{call.region}:{call.account}:{name}"


def _kms_context(params: Mapping[str, Any]) -> dict[str, Value]:
    context: dict[str, Value] = {}
    encryption_context = params.get("EncryptionContext")
    if encryption_context is not None:
        for name, value in encryption_context.items():
            context[f"kms:EncryptionContext:{name}"] = str(value)
        context["kms:EncryptionContextKeys"] = tuple(sorted(encryption_context))
    for parameter, key in (
        ("MacAlgorithm", "kms:MacAlgorithm"),
        ("EncryptionAlgorithm", "kms:EncryptionAlgorithm"),
    ):
        if params.get(parameter):
            context[key] = str(params[parameter])
    return context


@MAPPERS.maps(
    "kms",
    "Encrypt",
    "GenerateDataKey",
    "GenerateDataKeyWithoutPlaintext",
    "GenerateMac",
    "VerifyMac",
    "Sign",
    "Verify",
    "DescribeKey",
    "GetPublicKey",
)
def _kms_key(call: Call, _: Stack) -> list[Request]:
    return [Request(f"kms:{call.operation}", _key_arn(call, call.params["KeyId"]), _kms_context(call.params))]


@MAPPERS.maps("kms", "Decrypt")
def _kms_decrypt(call: Call, _: Stack) -> list[Request]:
    """The key the answer names, else the one the call names, else the one the ciphertext names."""
    key = (call.response or {}).get("KeyId") or call.params.get("KeyId")
    if not key:
        key = bytes(call.params["CiphertextBlob"])[:_KEY_ID_LENGTH].decode()
    return [Request("kms:Decrypt", _key_arn(call, str(key)), _kms_context(call.params))]


@MAPPERS.maps("kms", "GenerateRandom")
def _kms_random(call: Call, _: Stack) -> list[Request]:
    return [Request("kms:GenerateRandom", "*")]
