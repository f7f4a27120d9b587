"""JWTs of the service: access tokens for integrators and short-lived authTokens for client SDKs.

Both are signed by the stack's key of the current window (``phoneid.domain.token_keys``). They
differ in audience and ``token_use``, so an authToken is never accepted where an access token is
required, and a token of another tier or region (another issuer and audience) is never accepted.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from phoneid.domain.clients import Caller, Tier
from phoneid.domain.errors import Unauthorized
from phoneid.domain.phone import Region

if TYPE_CHECKING:
    from phoneid.domain.token_keys import PublicKey
    from phoneid.ports import TokenSigner

ACCESS_TOKEN_LIFETIME = timedelta(minutes=60)
REFRESH_TOKEN_LIFETIME = timedelta(hours=24)
ALLOWED_ALGORITHMS = ("ES256",)
REQUIRED_CLAIMS = ("exp", "iat", "iss", "aud", "sub", "jti", "token_use")
# Tolerated clock difference for "issued at" between the signer and the verifier.
CLOCK_SKEW = timedelta(seconds=30)


@dataclass(frozen=True)
class FlowToken:
    """Which flow an authToken opened (the client API acts for this session only), and the facts
    about its client that the authorizer read, so the handlers need not read the client again."""

    caller: Caller
    correlation_id: str
    # Public (not a secret): what a web SDK must name to use key persistence.
    public_api_key: str = ""

    @property
    def client_id(self) -> str:
        return self.caller.client_id


@dataclass(frozen=True)
class Audience:
    """Issuer and audiences of one stack (one tier in one region)."""

    tier: Tier
    region: Region

    @property
    def issuer(self) -> str:
        return f"urn:phoneid:{self.tier}:{self.region.lower()}"

    @property
    def api(self) -> str:
        return f"{self.issuer}:api"

    @property
    def client_sdk(self) -> str:
        return f"{self.issuer}:client-sdk"


def _base64url(data: bytes) -> bytes:
    """JOSE's base64url: URL-safe alphabet, no padding (RFC 7515, section 2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def encode(claims: Mapping[str, Any], signer: TokenSigner) -> str:
    """Assemble a compact JWS, named and signed by one key (the one the signer signs with now)."""
    key = signer.signing_key()
    header = {"alg": key.jwk["alg"], "typ": "JWT", "kid": key.jwk["kid"]}
    segments = [_base64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)]
    signing_input = b".".join(segments)
    return (signing_input + b"." + _base64url(key.sign(signing_input))).decode()


def claims_for(
    *,
    audience: str,
    issuer: str,
    subject: str,
    token_use: str,
    now: datetime,
    lifetime: timedelta,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    issued = int(now.timestamp())
    return {
        "iss": issuer,
        "aud": audience,
        "sub": subject,
        "iat": issued,
        "exp": issued + int(lifetime.total_seconds()),
        "jti": str(uuid.uuid4()),
        "token_use": token_use,
        **(extra or {}),
    }


def verify(
    token: str,
    *,
    key_for: Callable[[str], PublicKey | None],
    issuer: str,
    audience: str,
    token_use: str,
    now: datetime,
    max_lifetime: timedelta = ACCESS_TOKEN_LIFETIME,
) -> dict[str, Any]:
    """Verify signature, algorithm, issuer, audience, use and lifetime; raise Unauthorized otherwise.

    ``max_lifetime`` is the longest ``exp - iat`` this service issues for that kind of token; ``iat``
    must lie in the signing key's window (``PublicKey.admits``).
    """
    # PyJWT, and cryptography under it, load in the functions that verify tokens, not in every one
    # that names a FlowToken or an Audience.
    import jwt

    try:
        header = jwt.get_unverified_header(token)
        algorithm = header.get("alg")
        if algorithm not in ALLOWED_ALGORITHMS:
            raise Unauthorized("Unauthorized request: token algorithm not accepted")
        kid = header.get("kid")
        key = key_for(kid) if isinstance(kid, str) else None
        if key is None or key.jwk.get("alg") != algorithm:
            raise Unauthorized("Unauthorized request: token signed by an unknown key")
        claims: dict[str, Any] = jwt.decode(
            token,
            key=jwt.PyJWK(dict(key.jwk)).key,
            algorithms=[algorithm],
            audience=audience,
            issuer=issuer,
            # Lifetime is checked below against the injected clock.
            options={"require": list(REQUIRED_CLAIMS), "verify_exp": False, "verify_iat": False},
        )
    except jwt.PyJWTError as error:
        raise Unauthorized("Unauthorized request: invalid token") from error
    if claims.get("token_use") != token_use:
        raise Unauthorized("Unauthorized request: wrong kind of token")
    if not isinstance(claims["exp"], int) or not isinstance(claims["iat"], int):
        raise Unauthorized("Unauthorized request: invalid token")
    timestamp = now.timestamp()
    if claims["exp"] <= timestamp:
        raise Unauthorized("Unauthorized request: token expired")
    if claims["iat"] > timestamp + CLOCK_SKEW.total_seconds():
        raise Unauthorized("Unauthorized request: token issued in the future")
    # We never sign longer-lived tokens: one that claims more was not minted by our issuing code.
    if claims["exp"] - claims["iat"] > max_lifetime.total_seconds():
        raise Unauthorized("Unauthorized request: token lifetime too long")
    # A key signs only in its own window: a token it "issued" at another time was not issued by us.
    if not key.admits(claims["iat"]):
        raise Unauthorized("Unauthorized request: token issued outside its key's window")
    return claims
