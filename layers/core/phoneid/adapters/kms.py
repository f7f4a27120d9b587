"""KMS adapters: JWT signing with an asymmetric key, and PII encryption bound to a context."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import load_der_public_key
from jwt.utils import base64url_encode

from phoneid.adapters.aws import provider_errors
from phoneid.domain.errors import InternalError

_SIGNING = {
    "ECC_NIST_P256": ("ES256", "ECDSA_SHA_256"),
    "RSA_2048": ("RS256", "RSASSA_PKCS1_V1_5_SHA_256"),
    "RSA_3072": ("RS256", "RSASSA_PKCS1_V1_5_SHA_256"),
    "RSA_4096": ("RS256", "RSASSA_PKCS1_V1_5_SHA_256"),
}


def _b64(data: bytes) -> str:
    return base64url_encode(data).decode()


def _int_bytes(value: int, size: int | None = None) -> bytes:
    return value.to_bytes(size or (value.bit_length() + 7) // 8, "big")


def jwk_from_der(der: bytes, algorithm: str) -> dict[str, str]:
    """A public JWK with its RFC 7638 thumbprint as ``kid``."""
    key = load_der_public_key(der)
    members: dict[str, str]
    if isinstance(key, ec.EllipticCurvePublicKey):
        numbers = key.public_numbers()
        members = {
            "crv": "P-256",
            "kty": "EC",
            "x": _b64(_int_bytes(numbers.x, 32)),
            "y": _b64(_int_bytes(numbers.y, 32)),
        }
    elif isinstance(key, rsa.RSAPublicKey):
        rsa_numbers = key.public_numbers()
        members = {"e": _b64(_int_bytes(rsa_numbers.e)), "kty": "RSA", "n": _b64(_int_bytes(rsa_numbers.n))}
    else:
        raise ValueError("unsupported signing key type")
    thumbprint = hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest()
    return {**members, "kid": _b64(thumbprint), "alg": algorithm, "use": "sig"}


class KmsTokenSigner:
    """The private key never leaves KMS; the public key is fetched once per container."""

    def __init__(self, kms: Any, key_id: str) -> None:
        self._kms = kms
        self._key_id = key_id

    @cached_property
    def _public(self) -> tuple[str, str, dict[str, str]]:
        with provider_errors("signing key read"):
            response = self._kms.get_public_key(KeyId=self._key_id)
        # moto names the spec by its older name only.
        spec = response.get("KeySpec") or response["CustomerMasterKeySpec"]
        algorithm, kms_algorithm = _SIGNING[spec]
        return algorithm, kms_algorithm, jwk_from_der(response["PublicKey"], algorithm)

    @property
    def algorithm(self) -> str:
        return self._public[0]

    def public_jwk(self) -> Mapping[str, Any]:
        return self._public[2]

    def sign(self, signing_input: bytes) -> bytes:
        with provider_errors("token signing"):
            response = self._kms.sign(
                KeyId=self._key_id,
                Message=signing_input,
                MessageType="RAW",
                SigningAlgorithm=self._public[1],
            )
        signature: bytes = response["Signature"]
        if self.algorithm != "ES256":
            return signature
        # KMS returns a DER ECDSA signature; JWS wants r || s, 32 bytes each.
        r, s = decode_dss_signature(signature)
        return _int_bytes(r, 32) + _int_bytes(s, 32)


class KmsPiiCipher:
    """Each ciphertext is bound to its record by the encryption context (and CloudTrail shows it)."""

    def __init__(self, kms: Any, key_id: str) -> None:
        self._kms = kms
        self._key_id = key_id

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        with provider_errors("PII encryption"):
            response = self._kms.encrypt(
                KeyId=self._key_id, Plaintext=plaintext, EncryptionContext=dict(context)
            )
        return bytes(response["CiphertextBlob"])

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        with provider_errors("PII decryption"):
            response = self._kms.decrypt(
                KeyId=self._key_id, CiphertextBlob=ciphertext, EncryptionContext=dict(context)
            )
        return bytes(response["Plaintext"])


class KmsCodeMac:
    """HMAC-SHA-256 in KMS for one-time codes; verification is done by KMS too."""

    def __init__(self, kms: Any, key_id: str) -> None:
        self._kms = kms
        self._key_id = key_id

    def digest(self, message: str) -> str:
        with provider_errors("code MAC"):
            response = self._kms.generate_mac(
                KeyId=self._key_id, Message=message.encode(), MacAlgorithm="HMAC_SHA_256"
            )
        return base64.b64encode(response["Mac"]).decode()

    def matches(self, message: str, digest: str) -> bool:
        try:
            self._kms.verify_mac(
                KeyId=self._key_id,
                Message=message.encode(),
                MacAlgorithm="HMAC_SHA_256",
                Mac=base64.b64decode(digest),
            )
        except self._kms.exceptions.KMSInvalidMacException:
            return False
        except (ClientError, BotoCoreError) as error:
            raise InternalError("Internal error during code check; retry the request") from error
        return True


class DerivedKeyMac:
    """HMAC-SHA-256 under a key derived from the KMS HMAC key, for MACs computed in bulk.

    The derived key is KMS's MAC of a label naming the purpose, fetched once per container: a Connect
    file's 800,000 aliases then cost one KMS call instead of 800,000 (KMS's HMAC quota is far below
    what a batch asks), and the KMS key itself still never leaves KMS. Another purpose gets another key.
    """

    def __init__(self, kms: Any, key_id: str, purpose: str) -> None:
        self._kms = kms
        self._key_id = key_id
        self._label = f"phoneid:derived-key:{purpose}".encode()
        self._key: bytes | None = None
        self._lock = threading.Lock()

    def _derived(self) -> bytes:
        if self._key is not None:  # the hot path: no lock once derived
            return self._key
        with self._lock:
            if self._key is None:
                with provider_errors("key derivation"):
                    response = self._kms.generate_mac(
                        KeyId=self._key_id, Message=self._label, MacAlgorithm="HMAC_SHA_256"
                    )
                self._key = bytes(response["Mac"])
            return self._key

    def digest(self, message: str) -> str:
        mac = hmac.new(self._derived(), message.encode(), hashlib.sha256).digest()
        return base64.b64encode(mac).decode()
