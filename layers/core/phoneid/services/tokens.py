"""POST /token: client credentials and refresh grants; JWKS; and access-token checks for the authorizer."""

from __future__ import annotations

import re
from typing import Any

from typing_extensions import TypeIs

from phoneid.api.token_models import TokenResponse
from phoneid.domain import tokens
from phoneid.domain.clients import Caller, Client
from phoneid.domain.credentials import hash_token, new_refresh_token, verify_secret
from phoneid.domain.errors import MalformedRequest, Unauthorized
from phoneid.domain.session import SESSION_LIFETIME
from phoneid.domain.tokens import ACCESS_TOKEN_LIFETIME, REFRESH_TOKEN_LIFETIME, Audience, FlowToken
from phoneid.ports import ClientStore, Clock, RefreshTokenStore, TokenSigner, VerificationKeys

# Exactly "Bearer <jwt>": missing characters or stray whitespace are a 401 (docs/api.md).
_BEARER = re.compile(r"Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)")


class TokenService:
    def __init__(
        self,
        *,
        clients: ClientStore,
        refresh_tokens: RefreshTokenStore,
        signer: TokenSigner,
        keys: VerificationKeys,
        clock: Clock,
        audience: Audience,
    ) -> None:
        self._clients = clients
        self._refresh_tokens = refresh_tokens
        self._signer = signer
        self._keys = keys
        self._clock = clock
        self._audience = audience

    def grant(self, form: dict[str, str]) -> TokenResponse:
        grant_type = form.get("grant_type")
        if grant_type == "client_credentials":
            client = self._authenticate(form.get("client_id"), form.get("client_secret"))
        elif grant_type == "refresh_token":
            client = self._redeem(form)
        elif not grant_type:
            raise MalformedRequest(problems={"grant_type": "is required"})
        else:
            raise MalformedRequest(problems={"grant_type": "must be client_credentials or refresh_token"})
        return self._issue(client)

    def jwks(self) -> dict[str, Any]:
        return {"keys": [dict(key.jwk) for key in self._keys.published()]}

    def authorize(self, authorization: str | None) -> Caller:
        """The caller an ``Authorization`` header proves, or Unauthorized."""
        found = _BEARER.fullmatch(authorization or "")
        if not found:
            raise Unauthorized("Unauthorized request: expected 'Authorization: Bearer <access token>'")
        claims = tokens.verify(
            found.group(1),
            key_for=self._keys.verification_key,
            issuer=self._audience.issuer,
            audience=self._audience.api,
            token_use="access",
            now=self._clock.now(),
            max_lifetime=ACCESS_TOKEN_LIFETIME,
        )
        client = self._clients.get(str(claims["sub"]))
        if not self._usable(client):
            raise Unauthorized()
        return client.as_caller()

    def authorize_flow(self, authorization: str | None) -> FlowToken:
        """The flow an SDK's ``Authorization: Bearer <authToken>`` belongs to, or Unauthorized."""
        found = _BEARER.fullmatch(authorization or "")
        if not found:
            raise Unauthorized("Unauthorized request: expected 'Authorization: Bearer <authToken>'")
        claims = tokens.verify(
            found.group(1),
            key_for=self._keys.verification_key,
            issuer=self._audience.issuer,
            audience=self._audience.client_sdk,
            token_use="client",
            now=self._clock.now(),
            max_lifetime=SESSION_LIFETIME,
        )
        client_id = claims.get("cid")
        client = self._clients.get(client_id) if isinstance(client_id, str) else None
        if not self._usable(client):
            raise Unauthorized()
        return FlowToken(client.as_caller(), str(claims["sub"]), client.public_api_key)

    def _usable(self, client: Client | None) -> TypeIs[Client]:
        return (
            client is not None
            and client.enabled
            and client.tier == self._audience.tier
            and client.region == self._audience.region
        )

    def _authenticate(self, client_id: str | None, client_secret: str | None) -> Client:
        if not client_id or not client_secret:
            raise Unauthorized("Unauthorized request: client_id and client_secret are required")
        client = self._clients.get(client_id) if len(client_id) <= 128 else None
        secret_ok = verify_secret(client_secret, client.secret_hash if client else None)
        if not secret_ok or not self._usable(client):
            # One answer for unknown client, wrong secret, disabled, or another tier or region.
            raise Unauthorized("Unauthorized request: invalid client credentials for this tier and region")
        return client

    def _redeem(self, form: dict[str, str]) -> Client:
        token, client_id = form.get("refresh_token"), form.get("client_id")
        if not token or not client_id:
            raise MalformedRequest(problems={"refresh_token": "refresh_token and client_id are required"})
        # Confidential clients may also authenticate (RFC 6749 6); the single-use token suffices alone.
        secret = form.get("client_secret")
        client = self._authenticate(client_id, secret) if secret else self._clients.get(client_id)
        redeemed = self._refresh_tokens.consume(hash_token(token), client_id, self._clock.now())
        if not redeemed or not self._usable(client):
            raise Unauthorized("Unauthorized request: refresh token invalid, used or expired")
        return client

    def _issue(self, client: Client) -> TokenResponse:
        now = self._clock.now()
        claims = tokens.claims_for(
            audience=self._audience.api,
            issuer=self._audience.issuer,
            subject=client.client_id,
            token_use="access",
            now=now,
            lifetime=ACCESS_TOKEN_LIFETIME,
        )
        refresh = new_refresh_token()
        self._refresh_tokens.put(hash_token(refresh), client.client_id, now + REFRESH_TOKEN_LIFETIME)
        return TokenResponse(
            access_token=tokens.encode(claims, self._signer),
            refresh_token=refresh,
            refresh_expires_in=int(REFRESH_TOKEN_LIFETIME.total_seconds()),
            expires_in=int(ACCESS_TOKEN_LIFETIME.total_seconds()),
        )
