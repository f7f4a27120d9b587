"""ES256 keys in memory (the ``cryptography`` library): new random key pairs, JWKs, JWS signatures."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.hashes import SHA256
from jwt.utils import base64url_encode


def _b64(data: bytes) -> str:
    return base64url_encode(data).decode()


def jwk_of(key: ec.EllipticCurvePublicKey) -> dict[str, str]:
    """A P-256 public key as an ES256 JWK, with its RFC 7638 thumbprint as ``kid``."""
    numbers = key.public_numbers()
    members = {
        "crv": "P-256",
        "kty": "EC",
        "x": _b64(numbers.x.to_bytes(32, "big")),
        "y": _b64(numbers.y.to_bytes(32, "big")),
    }
    thumbprint = hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest()
    return {**members, "kid": _b64(thumbprint), "alg": "ES256", "use": "sig"}


@dataclass(frozen=True)
class Es256Key:
    """A P-256 private key and its public JWK: signs JWS (raw r || s, as ES256 wants)."""

    private_key: ec.EllipticCurvePrivateKey
    jwk: Mapping[str, str]

    @classmethod
    def generate(cls) -> Es256Key:
        """A new key from the operating system's CSPRNG: derived from nothing."""
        private_key = ec.generate_private_key(ec.SECP256R1())
        return cls(private_key, jwk_of(private_key.public_key()))

    @classmethod
    def from_scalar(cls, scalar: bytes) -> Es256Key:
        private_key = ec.derive_private_key(int.from_bytes(scalar, "big"), ec.SECP256R1())
        return cls(private_key, jwk_of(private_key.public_key()))

    @property
    def scalar(self) -> bytes:
        """The private key as its 32-byte big-endian scalar (what KMS seals)."""
        return self.private_key.private_numbers().private_value.to_bytes(32, "big")

    def sign(self, signing_input: bytes) -> bytes:
        r, s = decode_dss_signature(self.private_key.sign(signing_input, ec.ECDSA(SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")


class Es256Keys:
    """``SigningKeyMaker`` of ES256 keys."""

    def generate(self) -> Es256Key:
        return Es256Key.generate()

    def load(self, scalar: bytes) -> Es256Key:
        return Es256Key.from_scalar(scalar)
