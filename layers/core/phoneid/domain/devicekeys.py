"""Device keys: a P-256 key pair made on the customer's device, bound to a phone number.

The private key never leaves the device. The device proves it holds the key by signing a fresh
server nonce (ECDSA P-256 with SHA-256, the raw r||s form WebCrypto produces); a valid proof for the
key's number stands in for the possession check on later unified authentications.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from phoneid.domain.errors import PhoneIdError

DEFAULT_INACTIVITY = timedelta(days=180)


class KeyStatus(StrEnum):
    ACTIVE = "active"
    REVOKED = "revoked"


class InvalidKeyProof(PhoneIdError):
    code = 8002
    status = 403
    default_message = "The device key proof is not valid"


@dataclass(frozen=True)
class DeviceKey:
    client_id: str
    device_id: str
    public_jwk: Mapping[str, str]
    phone_number: str | None  # None: bound without a number (EU, possessionType none)
    status: KeyStatus
    created_at: datetime
    last_used_at: datetime

    def inactive(self, now: datetime, period: timedelta) -> bool:
        """Deactivated on the server after a long inactivity; any successful authentication resets it."""
        return now - self.last_used_at > period


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_key(jwk: Mapping[str, Any]) -> ec.EllipticCurvePublicKey:
    """A P-256 public key from its JWK; anything else is an invalid proof."""
    try:
        if jwk.get("kty") != "EC" or jwk.get("crv") != "P-256" or "d" in jwk:
            raise ValueError("not a P-256 public JWK")
        x, y = _b64decode(str(jwk["x"])), _b64decode(str(jwk["y"]))
        if len(x) != 32 or len(y) != 32:
            raise ValueError("bad coordinates")
        return ec.EllipticCurvePublicNumbers(
            int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1()
        ).public_key()
    except (KeyError, ValueError, TypeError):
        raise InvalidKeyProof("publicKey must be a P-256 public JWK") from None


def canonical_jwk(jwk: Mapping[str, Any]) -> dict[str, str]:
    public_key(jwk)
    return {"kty": "EC", "crv": "P-256", "x": str(jwk["x"]), "y": str(jwk["y"])}


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 thumbprint: the same key always has the same one."""
    members = json.dumps(canonical_jwk(jwk), separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(members).digest()).decode().rstrip("=")


def verify_proof(jwk: Mapping[str, Any], nonce: str, signature: str) -> None:
    """Raise InvalidKeyProof unless ``signature`` (raw r||s, base64url) signs ``nonce`` with the key."""
    key = public_key(jwk)
    try:
        raw = _b64decode(signature)
    except ValueError:
        raise InvalidKeyProof() from None
    if len(raw) != 64:
        raise InvalidKeyProof()
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        key.verify(der, nonce.encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise InvalidKeyProof() from None
