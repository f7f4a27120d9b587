"""KMS adapters: token signing keys sealed per window, one-time code MACs, PII sealed to a context."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from phoneid.adapters.aws import internal_error, provider_errors

if TYPE_CHECKING:
    from phoneid.domain.token_keys import KeyWindow
    from phoneid.ports import CodeMac


class KmsKeySealer:
    """Seals a window's private signing key with KMS ``Encrypt`` under an encryption context that
    names its use and its window: a sealed key opens only for that window (a blob moved to another
    window's item does not), and IAM grants ``kms:Decrypt`` for this use only to the functions that
    sign (docs/adr/0069-token-keys-of-a-window.md)."""

    USE = "token-signing-key"

    def __init__(self, kms: Any, key_id: str) -> None:
        self._kms = kms
        self._key_id = key_id

    def _context(self, window: KeyWindow) -> dict[str, str]:
        return {"use": self.USE, "window": window.name}

    def seal(self, private_key: bytes, window: KeyWindow) -> bytes:
        with provider_errors("signing key sealing"):
            response = self._kms.encrypt(
                KeyId=self._key_id, Plaintext=private_key, EncryptionContext=self._context(window)
            )
        return bytes(response["CiphertextBlob"])

    def unseal(self, sealed: bytes, window: KeyWindow) -> bytes:
        with provider_errors("signing key unsealing"):
            response = self._kms.decrypt(
                KeyId=self._key_id, CiphertextBlob=sealed, EncryptionContext=self._context(window)
            )
        return bytes(response["Plaintext"])


# An envelope: magic, the data key's context names, the data key as KMS encrypted it, a nonce, and
# AES-256-GCM of the plaintext. KMS ciphertexts never start with a zero byte (AWS's start with a
# version byte of 1, moto's with a key id), so the magic tells the two formats apart.
_ENVELOPE = b"\x00PE1"
_NONCE = 12


def _canonical(context: Mapping[str, str]) -> bytes:
    return json.dumps(dict(context), sort_keys=True, separators=(",", ":")).encode()


# Context entries that name one record; a data key is bound to the others (the client, the use), so
# it seals many records of one client and use, and each record is bound to its whole context by the
# AES-GCM associated data.
_RECORD_NAMES = frozenset({"correlationId", "phoneNumber", "serviceId", "idempotencyKey"})
# How long, and for how many records, an instance seals with one data key (then asks for a new one),
# and how long it keeps a data key it unwrapped to open records.
_SEAL_SECONDS = 300.0
_SEAL_RECORDS = 10_000
_OPEN_SECONDS = 900.0
_OPEN_KEYS = 512


@dataclass
class _SealingKey:
    aead: AESGCM
    head: bytes  # magic, the bound context names and the wrapped key: the start of every envelope
    until: float
    records_left: int


class KmsPiiCipher:
    """Envelope encryption with KMS data keys, cached (the AWS Encryption SDK's caching pattern).

    A data key comes from KMS bound (by the encryption context) to what the records it seals share:
    the client and the use, never one record's id. Each record is sealed with AES-256-GCM under it,
    its whole context (correlationId, phone number or serviceId included) as associated data. A
    sealed record moved to another record, or another client, does not open: the per-record binding
    is the same as KMS's own, while one KMS call serves all the records a key seals for five minutes
    in one instance, and one Decrypt opens them all for fifteen. CloudTrail shows the data key's use,
    not each record's (docs/adr/0058-cached-data-keys-for-personal-data.md). Ciphertexts of KMS Encrypt
    itself still open.
    """

    def __init__(self, kms: Any, key_id: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._kms = kms
        self._key_id = key_id
        self._clock = clock
        self._lock = threading.Lock()
        self._sealing: dict[bytes, _SealingKey] = {}
        self._opening: OrderedDict[tuple[bytes, bytes], tuple[AESGCM, float]] = OrderedDict()

    def encrypt(self, plaintext: bytes, context: Mapping[str, str]) -> bytes:
        return self.encrypt_many([(plaintext, context)])[0]

    def encrypt_many(self, records: Sequence[tuple[bytes, Mapping[str, str]]]) -> list[bytes]:
        if not records:
            return []
        shared = {name: value for name, value in records[0][1].items() if name not in _RECORD_NAMES}
        for _, context in records[1:]:
            shared = {name: value for name, value in shared.items() if context.get(name) == value}
        key = self._sealing_key(shared, len(records))
        sealed = []
        for plaintext, context in records:
            nonce = os.urandom(_NONCE)
            sealed.append(key.head + nonce + key.aead.encrypt(nonce, plaintext, _canonical(context)))
        return sealed

    def _sealing_key(self, shared: Mapping[str, str], records: int) -> _SealingKey:
        now, bound = self._clock(), _canonical(shared)
        with self._lock:
            key = self._sealing.get(bound)
            if key is not None and key.until > now and key.records_left >= records:
                key.records_left -= records
                return key
        with provider_errors("PII encryption"):
            response = self._kms.generate_data_key(
                KeyId=self._key_id, KeySpec="AES_256", EncryptionContext=dict(shared)
            )
        names = json.dumps(sorted(shared), separators=(",", ":")).encode()
        wrapped = bytes(response["CiphertextBlob"])
        key = _SealingKey(
            aead=AESGCM(bytes(response["Plaintext"])),
            head=_ENVELOPE + struct.pack(">HH", len(names), len(wrapped)) + names + wrapped,
            until=now + _SEAL_SECONDS,
            records_left=max(_SEAL_RECORDS - records, 0),
        )
        with self._lock:
            self._sealing[bound] = key
        return key

    def decrypt(self, ciphertext: bytes, context: Mapping[str, str]) -> bytes:
        if ciphertext.startswith(_ENVELOPE):
            return self._open_envelope(ciphertext, context)
        with provider_errors("PII decryption"):
            response = self._kms.decrypt(
                KeyId=self._key_id, CiphertextBlob=ciphertext, EncryptionContext=dict(context)
            )
        return bytes(response["Plaintext"])

    def _open_envelope(self, sealed: bytes, context: Mapping[str, str]) -> bytes:
        try:
            at = len(_ENVELOPE)
            names_size, wrapped_size = struct.unpack_from(">HH", sealed, at)
            at += 4
            names = json.loads(sealed[at : at + names_size])
            at += names_size
            wrapped = sealed[at : at + wrapped_size]
            at += wrapped_size
            nonce, body = sealed[at : at + _NONCE], sealed[at + _NONCE :]
            shared = {name: context[name] for name in names}
        except (struct.error, ValueError, KeyError, TypeError) as error:
            raise internal_error("PII decryption", error) from error
        try:
            return self._opening_key(wrapped, shared).decrypt(nonce, body, _canonical(context))
        except InvalidTag as error:
            raise internal_error("PII decryption", error) from error

    def _opening_key(self, wrapped: bytes, shared: Mapping[str, str]) -> AESGCM:
        """The data key, unwrapped by KMS for this bound context, or as unwrapped before. Keyed by the
        context too: a cached key opens only what KMS would have opened."""
        now, cache_key = self._clock(), (wrapped, _canonical(shared))
        with self._lock:
            cached = self._opening.get(cache_key)
            if cached is not None and cached[1] > now:
                self._opening.move_to_end(cache_key)
                return cached[0]
        with provider_errors("PII decryption"):
            response = self._kms.decrypt(
                KeyId=self._key_id, CiphertextBlob=wrapped, EncryptionContext=dict(shared)
            )
        aead = AESGCM(bytes(response["Plaintext"]))
        with self._lock:
            self._opening[cache_key] = (aead, now + _OPEN_SECONDS)
            while len(self._opening) > _OPEN_KEYS:
                self._opening.popitem(last=False)
        return aead


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
            raise internal_error("code check", error) from error
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


class OneTimeCodeMac:
    """One-time codes MACed in the instance under a derived key (``DerivedKeyMac``), not by two KMS
    calls per code (``GenerateMac`` at the send, ``VerifyMac`` at the entry): the KMS key still never
    leaves KMS, and a code's MAC stays bound to its session and send by the message.

    Its digests carry a prefix (base64 has no colon); a digest without it was made by KMS before this
    class existed (a code sent just before a deploy) and is checked by KMS
    (docs/adr/0063-one-time-codes-under-a-derived-key.md).
    """

    _PREFIX = "d1:"

    def __init__(self, derived: DerivedKeyMac, in_kms: CodeMac) -> None:
        self._derived = derived
        self._in_kms = in_kms

    def digest(self, message: str) -> str:
        return self._PREFIX + self._derived.digest(message)

    def matches(self, message: str, digest: str) -> bool:
        if not digest.startswith(self._PREFIX):
            return self._in_kms.matches(message, digest)
        return hmac.compare_digest(self.digest(message), digest)
