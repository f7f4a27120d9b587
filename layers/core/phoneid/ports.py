"""One Protocol per outside dependency. Services receive these; adapters implement them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from phoneid.domain.carrier import CarrierResult, Redirect
from phoneid.domain.clients import Client
from phoneid.domain.devicekeys import DeviceKey
from phoneid.domain.identity import Identity
from phoneid.domain.session import Session


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class SessionStore(Protocol):
    def create(self, session: Session) -> None: ...

    def get(self, client_id: str, correlation_id: str) -> Session | None:
        """The session of this client, or None: another client's session is never returned."""
        ...

    def save(self, old: Session, new: Session, now: datetime, keys: Sequence[DeviceKey] = ()) -> Session:
        """Write ``new`` if the stored session is still ``old`` (same version) and has not expired.

        ``keys`` (device keys the change binds) are written in the same transaction. Returns ``new``
        with its version bumped; raises ``TransitionRejected`` otherwise, writing nothing.
        """
        ...

    def put_pointer(self, kind: str, secret_hash: str, session: Session) -> None:
        """Remember which session a secret (Instant Link token, OIDC state) belongs to, until it expires."""
        ...

    def find_pointer(self, kind: str, secret_hash: str, now: datetime) -> tuple[str, str] | None:
        """(client id, correlationId) of the session the secret belongs to, while that session lives."""
        ...


class DeviceKeyStore(Protocol):
    def get(self, client_id: str, device_id: str) -> DeviceKey | None:
        """The client's key, or None: another client's key is never returned."""
        ...

    def revoke(self, client_id: str, device_id: str) -> bool: ...


class ClientStore(Protocol):
    def put(self, client: Client) -> None: ...

    def get(self, client_id: str) -> Client | None: ...

    def list(self) -> list[Client]: ...


class RefreshTokenStore(Protocol):
    def put(self, token_hash: str, client_id: str, expires_at: datetime) -> None: ...

    def consume(self, token_hash: str, client_id: str, now: datetime) -> bool:
        """Delete the client's token, once: False when unknown, used, expired or another client's."""
        ...


class IdentitySource(Protocol):
    def find(self, phone_number: str) -> Identity | None: ...


class IdentityStore(IdentitySource, Protocol):
    def put_many(self, identities: Iterable[Identity]) -> int: ...


class TokenSigner(Protocol):
    """Signs JWTs with a key whose private half never leaves the key service."""

    @property
    def algorithm(self) -> str: ...

    def sign(self, signing_input: bytes) -> bytes:
        """The JWS signature (raw form for ES256) over ``signing_input``."""
        ...

    def public_jwk(self) -> Mapping[str, Any]:
        """The public key as a JWK with ``kid``, ``alg`` and ``use``."""
        ...


class PiiCipher(Protocol):
    """Encrypts PII bound to a context: a ciphertext only decrypts with the same context."""

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes: ...

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes: ...


class RateLimiter(Protocol):
    def hit(self, key: str, window_start: int, ttl_seconds: int) -> int:
        """Count one request for ``key`` in the window starting at ``window_start`` (epoch seconds).

        Returns the number of requests counted in that window, this one included.
        """
        ...


class SmsSender(Protocol):
    def send(self, phone_number: str, text: str) -> None: ...


class CodeMac(Protocol):
    """A keyed MAC for one-time codes: the key never leaves the key service, only MACs are stored."""

    def digest(self, message: str) -> str: ...

    def matches(self, message: str, digest: str) -> bool:
        """Constant-time: whether ``message`` has MAC ``digest``."""
        ...


class CarrierVerifier(Protocol):
    """Mobile Auth: the network says whether the device's SIM has the number."""

    def begin(self, *, state: str, redirect_uri: str, phone_number: str | None) -> Redirect: ...

    def finish(self, *, code: str, redirect_uri: str, phone_number: str | None) -> CarrierResult: ...


class SocketNotifier(Protocol):
    """Pushes a message to a client's WebSocket (API Gateway PostToConnection)."""

    def notify(self, endpoint: str, connection_id: str, message: Mapping[str, Any]) -> bool:
        """False when the connection is gone."""
        ...


class ReputationSource(Protocol):
    """Reputation findings about a number, as GFP reason codes (risk and authentication)."""

    def reasons(self, phone_number: str) -> frozenset[int]: ...
