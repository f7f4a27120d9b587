"""In-memory stand-ins for the ports, with the same semantics as the real adapters (conditional
writes included), for unit tests that open no sockets."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from phoneid.adapters.kms import jwk_from_der
from phoneid.domain.clients import Client
from phoneid.domain.devicekeys import DeviceKey, KeyStatus
from phoneid.domain.identity import Identity
from phoneid.domain.session import Session, TransitionRejected

START = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, start: datetime = START) -> None:
        self.current = start

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> None:
        self.current += timedelta(**delta)


class InMemoryDeviceKeyStore:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str], DeviceKey] = {}

    def get(self, client_id: str, device_id: str) -> DeviceKey | None:
        return self.items.get((client_id, device_id))

    def revoke(self, client_id: str, device_id: str) -> bool:
        key = self.items.get((client_id, device_id))
        if key is None:
            return False
        self.items[(client_id, device_id)] = replace(key, status=KeyStatus.REVOKED)
        return True


class InMemorySessionStore:
    """Conditional on the version read and on expiry, like the DynamoDB adapter."""

    def __init__(self, device_keys: InMemoryDeviceKeyStore | None = None) -> None:
        self.items: dict[tuple[str, str], Session] = {}
        self.pointers: dict[str, tuple[str, str, datetime]] = {}
        self.device_keys = device_keys or InMemoryDeviceKeyStore()
        self._lock = threading.Lock()

    def create(self, session: Session) -> None:
        with self._lock:
            key = (session.client_id, session.correlation_id)
            assert key not in self.items
            self.items[key] = session

    def get(self, client_id: str, correlation_id: str) -> Session | None:
        return self.items.get((client_id, correlation_id))

    def save(self, old: Session, new: Session, now: datetime, keys: Sequence[DeviceKey] = ()) -> Session:
        with self._lock:
            key = (old.client_id, old.correlation_id)
            current = self.items.get(key)
            if current is None or current.version != old.version or current.expired(now):
                raise TransitionRejected()
            saved = replace(new, version=old.version + 1)
            self.items[key] = saved
            for device_key in keys:
                self.device_keys.items[(device_key.client_id, device_key.device_id)] = device_key
            return saved

    def put_pointer(self, kind: str, secret_hash: str, session: Session) -> None:
        self.pointers[f"{kind}#{secret_hash}"] = (
            session.client_id,
            session.correlation_id,
            session.expires_at,
        )

    def find_pointer(self, kind: str, secret_hash: str, now: datetime) -> tuple[str, str] | None:
        pointer = self.pointers.get(f"{kind}#{secret_hash}")
        if pointer is None or pointer[2] <= now:
            return None
        return pointer[0], pointer[1]


class InMemoryClientStore:
    def __init__(self) -> None:
        self.items: dict[str, Client] = {}

    def put(self, client: Client) -> None:
        self.items[client.client_id] = client

    def get(self, client_id: str) -> Client | None:
        return self.items.get(client_id)

    def list(self) -> list[Client]:
        return sorted(self.items.values(), key=lambda c: c.created_at)


class InMemoryRefreshTokenStore:
    def __init__(self) -> None:
        self.items: dict[str, tuple[str, datetime]] = {}

    def put(self, token_hash: str, client_id: str, expires_at: datetime) -> None:
        self.items[token_hash] = (client_id, expires_at)

    def consume(self, token_hash: str, client_id: str, now: datetime) -> bool:
        entry = self.items.get(token_hash)
        if entry is None or entry[0] != client_id or entry[1] <= now:
            return False
        del self.items[token_hash]
        return True


class InMemoryIdentityStore:
    def __init__(self, identities: Iterable[Identity] = ()) -> None:
        self.items = {i.phone_number: i for i in identities}

    def find(self, phone_number: str) -> Identity | None:
        return self.items.get(phone_number)

    def put_many(self, identities: Iterable[Identity]) -> int:
        count = 0
        for identity in identities:
            self.items[identity.phone_number] = identity
            count += 1
        return count


class InMemoryRateLimiter:
    def __init__(self) -> None:
        self.hits: dict[str, int] = {}

    def hit(self, key: str, window_start: int, ttl_seconds: int) -> int:
        name = f"{key}#{window_start}"
        self.hits[name] = self.hits.get(name, 0) + 1
        return self.hits[name]


class LocalSigner:
    """ES256 with a key held in memory, as KMS would sign (raw r||s)."""

    algorithm = "ES256"

    def __init__(self) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        der = self._key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        self._jwk = jwk_from_der(der, "ES256")

    def public_jwk(self) -> Mapping[str, Any]:
        return self._jwk

    def sign(self, signing_input: bytes) -> bytes:
        r, s = decode_dss_signature(self._key.sign(signing_input, ec.ECDSA(SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    @property
    def private_key(self) -> ec.EllipticCurvePrivateKey:
        return self._key


class ContextCipher:
    """Reversible, and refuses a ciphertext presented with another context, like KMS."""

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        return repr(sorted(context.items())).encode() + b"\x00" + plaintext[::-1]

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        bound, _, body = ciphertext.partition(b"\x00")
        if bound != repr(sorted(context.items())).encode():
            raise ValueError("encryption context mismatch")
        return body[::-1]
