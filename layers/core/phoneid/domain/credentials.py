"""Client credentials: generation, and storage as salted scrypt hashes only."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from functools import cache

_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1
_MAX_SECRET_LENGTH = 512


def new_client_id() -> str:
    return secrets.token_hex(16)


def new_client_secret() -> str:
    return secrets.token_urlsafe(32)


def new_refresh_token() -> str:
    return secrets.token_urlsafe(32)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(secret: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, dklen=32, maxmem=64 * 1024 * 1024)


def hash_secret(secret: str) -> str:
    """``scrypt$N$r$p$salt$hash``: parameters travel with the hash so they can be raised later."""
    salt = secrets.token_bytes(16)
    digest = _scrypt(secret, salt, _SCRYPT_N, _SCRYPT_R, _SCRYPT_P)
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${_b64(salt)}${_b64(digest)}"


@cache
def _decoy_hash() -> str:
    """Compared against when the client id is unknown, so that costs the same time as a wrong secret."""
    return hash_secret(secrets.token_urlsafe(16))


def verify_secret(secret: str, stored: str | None) -> bool:
    if len(secret) > _MAX_SECRET_LENGTH:
        return False
    scheme, n, r, p, salt, digest = (stored or _decoy_hash()).split("$")
    if scheme != "scrypt":
        return False
    candidate = _scrypt(secret, _unb64(salt), int(n), int(r), int(p))
    return hmac.compare_digest(candidate, _unb64(digest)) and stored is not None


def hash_token(token: str) -> str:
    """Refresh tokens carry 256 random bits, so an unsalted SHA-256 is enough to store them safely."""
    return hashlib.sha256(token.encode()).hexdigest()
