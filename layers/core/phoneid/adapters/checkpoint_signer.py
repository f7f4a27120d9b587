"""Checkpoints signed in KMS with the decision history's asymmetric key (``ECC_NIST_P256``,
``SIGN_VERIFY``): the private key never leaves KMS, one ``Sign`` per checkpoint
(docs/adr/0120-a-decision-history-verified-offline.md)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import load_der_public_key

from phoneid.adapters.aws import provider_errors
from phoneid.adapters.es256 import jwk_of


class KmsCheckpointSigner:
    def __init__(self, kms: Any, key_id: str) -> None:
        self._kms = kms
        self._key_id = key_id

    @cached_property
    def public_jwk(self) -> dict[str, str]:
        """The key's public half as an ES256 JWK, ``kid`` its RFC 7638 thumbprint (read once)."""
        with provider_errors("checkpoint key.GetPublicKey"):
            answer = self._kms.get_public_key(KeyId=self._key_id)
        key = load_der_public_key(bytes(answer["PublicKey"]))
        if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
            raise ValueError("the checkpoint key is not a P-256 key")
        return jwk_of(key)

    @property
    def kid(self) -> str:
        return self.public_jwk["kid"]

    def sign(self, signing_input: bytes) -> bytes:
        """ES256's raw signature (r || s) of ``signing_input``, from KMS's DER one."""
        with provider_errors("checkpoint key.Sign"):
            answer = self._kms.sign(
                KeyId=self._key_id,
                Message=signing_input,
                MessageType="RAW",
                SigningAlgorithm="ECDSA_SHA_256",
            )
        r, s = decode_dss_signature(bytes(answer["Signature"]))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
