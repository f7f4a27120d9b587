"""The keys that sign tokens: made ahead of their window by the rotation, opened by the signers, and
published (public halves only) to the verifiers and the JWKS. docs/adr/0069-token-keys-of-a-window.md;
the threat model and the runbook are in docs/operations.md, "Token signing keys".
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from aws_lambda_powertools import Logger

from phoneid.domain.errors import InternalError
from phoneid.domain.token_keys import KeyWindow, PublicKey, SealedKey
from phoneid.ports import (
    Clock,
    KeyRotationTrigger,
    KeySealer,
    PrivateSigningKey,
    SigningKeyMaker,
    TokenKeyStore,
)

logger = Logger(child=True)

# The rotation forgets the private halves of this many windows back (it runs hourly: one would do;
# the others catch up after an outage). Older items expire by TTL, private half and all.
_WINDOWS_FORGOTTEN = 3
# A key replaced by an emergency rotation (``phoneid token-keys replace``) signs nothing, and its tokens
# open nothing, once this much time has passed (docs/operations.md, "When a key may have been exposed").
REPLACED_KEY_REFUSED_WITHIN = timedelta(minutes=5)
# Signers check the table this often, so a replaced key stops signing within this time.
REREAD_EVERY = timedelta(minutes=5)
# Verifiers read the public keys again this often (and, for a ``kid`` they do not know, at most this
# often): API Gateway keeps an authorizer's answer per token for its ``ReauthorizeEvery`` (240 s) on
# top, so a replaced key's token is refused after at most 60 s + 240 s, REPLACED_KEY_REFUSED_WITHIN
# (docs/adr/0115-a-replaced-keys-tokens-refused-within-five-minutes.md).
VERIFIERS_REREAD_EVERY = timedelta(minutes=1)
REREAD_UNKNOWN_EVERY = timedelta(minutes=1)


@dataclass(frozen=True)
class RotationReport:
    created: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"created": self.created, "forgotten": self.forgotten}


class TokenKeyRotation:
    """Makes the keys of the current and the next window (the next is published a window before it
    signs) and forgets the private halves of closed windows. The only writer of the keys.

    It needs ``kms:Encrypt`` (to seal) and no ``kms:Decrypt``: it makes keys, it never reads one."""

    def __init__(self, store: TokenKeyStore, sealer: KeySealer, keys: SigningKeyMaker, clock: Clock) -> None:
        self._store = store
        self._sealer = sealer
        self._keys = keys
        self._clock = clock

    def run(self) -> RotationReport:
        now = self._clock.now()
        current = KeyWindow.at(now)
        wanted = [current, current.shifted(1)]
        present = {key.not_before for key in self._store.public_keys(wanted)}
        created = [window.name for window in wanted if window.opens not in present and self._create(window)]
        forgotten = [
            window.name
            for window in (current.shifted(-back) for back in range(1, _WINDOWS_FORGOTTEN + 1))
            if now >= window.sealing_ends and self._store.forget_private(window)
        ]
        if created or forgotten:
            logger.info(
                "token keys rotated", extra={"windows_made": created, "private_halves_forgotten": forgotten}
            )
        return RotationReport(created, forgotten)

    def replace(self) -> list[PublicKey]:
        """New keys for the current and the next window in place of theirs (an emergency: a signer's
        memory or a key's private half may have been read). The signers sign with the new ones within
        ``REREAD_EVERY``; tokens of the replaced keys stop verifying within ``VERIFIERS_REREAD_EVERY``,
        and stop opening the API within ``REPLACED_KEY_REFUSED_WITHIN``."""
        current = KeyWindow.at(self._clock.now())
        replaced = []
        for window in (current, current.shifted(1)):
            key = self._sealed_new(window)
            self._store.replace(key)
            replaced.append(key.public)
        logger.warning(
            "token keys replaced", extra={"windows": [key.not_before.date().isoformat() for key in replaced]}
        )
        return replaced

    def _create(self, window: KeyWindow) -> bool:
        """A new random key for ``window``, unless another rotation stored one first (then that one
        stands: one conditional write decides)."""
        return self._store.create(self._sealed_new(window))

    def _sealed_new(self, window: KeyWindow) -> SealedKey:
        key = self._keys.generate()
        return SealedKey(window, key.jwk, self._sealer.seal(key.scalar, window))


@dataclass(frozen=True)
class _Opened:
    window: KeyWindow
    key: PrivateSigningKey
    checked: datetime  # when the table last said this is the window's key


class WindowSigningKeys:
    """The signer's key: the current window's, unsealed once per instance and window (nothing per
    token), and checked against the table every few minutes, so a key replaced in an emergency
    (``TokenKeyRotation.replace``) stops signing within that time. A window with no key yet (a new
    stack) has the rotation run first."""

    def __init__(
        self,
        store: TokenKeyStore,
        sealer: KeySealer,
        keys: SigningKeyMaker,
        rotation: KeyRotationTrigger,
        clock: Clock,
    ) -> None:
        self._store = store
        self._sealer = sealer
        self._keys = keys
        self._rotation = rotation
        self._clock = clock
        self._opened: _Opened | None = None
        self._lock = threading.Lock()

    def signing_key(self) -> PrivateSigningKey:
        now = self._clock.now()
        window = KeyWindow.at(now)
        opened = self._opened
        if self._current(opened, window, now):  # the hot path: no lock, no call
            assert opened is not None
            return opened.key
        with self._lock:
            if not self._current(self._opened, window, now):
                # Only the current window's key is kept: a past window's never signs again.
                self._opened = self._open(window, now, self._opened)
            assert self._opened is not None
            return self._opened.key

    @staticmethod
    def _current(opened: _Opened | None, window: KeyWindow, now: datetime) -> bool:
        return (
            opened is not None
            and opened.window == window
            and timedelta(0) <= now - opened.checked < REREAD_EVERY
        )

    def _open(self, window: KeyWindow, now: datetime, opened: _Opened | None) -> _Opened:
        if opened is not None and opened.window == window:
            try:
                sealed = self._store.sealed(window)
            except InternalError:  # the table did not answer: the key it gave is still the window's
                return _Opened(window, opened.key, now)
            if sealed is not None and sealed.jwk["kid"] == opened.key.jwk["kid"]:
                return _Opened(window, opened.key, now)
        return _Opened(window, self._unsealed(window), now)

    def _unsealed(self, window: KeyWindow) -> PrivateSigningKey:
        sealed = self._store.sealed(window)
        if sealed is None or sealed.sealed_private is None:
            self._rotation.rotate_now()
            sealed = self._store.sealed(window)
        if sealed is None or sealed.sealed_private is None:
            raise _refused("no signing key for the window", window)
        key = self._keys.load(self._sealer.unseal(sealed.sealed_private, window))
        if key.jwk["kid"] != sealed.jwk["kid"]:
            raise _refused("sealed key does not match its public key", window)
        logger.info("signing key opened", extra={"window": window.name, "kid": key.jwk["kid"]})
        return key


class PublishedTokenKeys:
    """What verifiers hold: the public keys of the previous, current and next windows, read again
    every minute and, for an unknown ``kid``, at most once a minute (forged ``kid``s cost one read a
    minute, however many arrive)."""

    def __init__(self, store: TokenKeyStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._keys: dict[str, PublicKey] = {}
        self._read: _Read | None = None
        self._lock = threading.Lock()

    def verification_key(self, kid: str) -> PublicKey | None:
        now = self._clock.now()
        key = self._current(now).get(kid)
        if key is None:
            key = self._current(now, unknown_kid=True).get(kid)
        return key if key is not None and now < key.useful_until else None

    def published(self) -> list[PublicKey]:
        now = self._clock.now()
        keys = self._current(now).values()
        return sorted((key for key in keys if now < key.useful_until), key=lambda key: key.not_before)

    def _current(self, now: datetime, *, unknown_kid: bool = False) -> dict[str, PublicKey]:
        window = KeyWindow.at(now)
        if self._fresh(window, now, unknown_kid):
            return self._keys
        with self._lock:
            if not self._fresh(window, now, unknown_kid):
                keys = self._store.public_keys([window.shifted(-1), window, window.shifted(1)])
                self._keys = {key.kid: key for key in keys}
                self._read = _Read(window, now, complete=any(key.not_before == window.opens for key in keys))
            return self._keys

    def _fresh(self, window: KeyWindow, now: datetime, unknown_kid: bool) -> bool:
        read = self._read
        if read is None or read.window != window:
            return False
        # A read that found no key for the window (a new stack's) is kept as briefly as one for a kid
        # it did not know: the first key is about to be made.
        short = unknown_kid or not read.complete
        return timedelta(0) <= now - read.at < (REREAD_UNKNOWN_EVERY if short else VERIFIERS_REREAD_EVERY)


@dataclass(frozen=True)
class _Read:
    window: KeyWindow
    at: datetime
    complete: bool  # it found the window's key


def _refused(problem: str, window: KeyWindow) -> InternalError:
    error = InternalError.referenced(" while opening the signing key")
    logger.error(problem, extra={"reference": error.reference, "window": window.name})
    return error
