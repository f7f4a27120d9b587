"""Token signing keys: one random P-256 key per window (a UTC day), never derived from anything.

A key signs only the tokens issued in its own window, and a token verifies only when its ``iat``
lies in the window of the key it names (give or take the clock skew allowed): a key known early, or
kept late, signs nothing outside its day. docs/adr/0069-token-keys-of-a-window.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from phoneid.domain.tokens import ACCESS_TOKEN_LIFETIME, CLOCK_SKEW

WINDOW_LENGTH = timedelta(days=1)
# The longest a token lives: a key verifies until this long after its window closes.
LONGEST_TOKEN = ACCESS_TOKEN_LIFETIME


@dataclass(frozen=True, order=True)
class KeyWindow:
    """The UTC day a key signs in."""

    day: date

    @classmethod
    def at(cls, moment: datetime) -> KeyWindow:
        return cls(moment.astimezone(UTC).date())

    @classmethod
    def named(cls, name: str) -> KeyWindow:
        return cls(date.fromisoformat(name))

    @property
    def name(self) -> str:
        return self.day.isoformat()

    @property
    def opens(self) -> datetime:
        return datetime.combine(self.day, time(), UTC)

    @property
    def closes(self) -> datetime:
        return self.opens + WINDOW_LENGTH

    @property
    def last_token_expires(self) -> datetime:
        """When no token a key of this window signed can still be valid."""
        return self.closes + CLOCK_SKEW + LONGEST_TOKEN

    @property
    def sealing_ends(self) -> datetime:
        """When the key's private half is no longer needed: no signer's clock is still in the window."""
        return self.closes + CLOCK_SKEW

    def shifted(self, windows: int) -> KeyWindow:
        return KeyWindow(self.day + windows * WINDOW_LENGTH)


@dataclass(frozen=True)
class PublicKey:
    """A key's public half as a JWK (``kid`` its RFC 7638 thumbprint) and the span it signs in."""

    jwk: Mapping[str, str]
    not_before: datetime
    not_after: datetime

    @classmethod
    def of(cls, jwk: Mapping[str, str], window: KeyWindow) -> PublicKey:
        return cls(jwk, window.opens, window.closes)

    @property
    def kid(self) -> str:
        return self.jwk["kid"]

    @property
    def useful_until(self) -> datetime:
        """When no token this key signed can still be valid."""
        return self.not_after + CLOCK_SKEW + LONGEST_TOKEN

    def admits(self, issued_at: int) -> bool:
        """Whether a token issued at ``issued_at`` (seconds) can have been signed by this key."""
        skew = CLOCK_SKEW.total_seconds()
        return self.not_before.timestamp() - skew <= issued_at < self.not_after.timestamp() + skew


@dataclass(frozen=True)
class SealedKey:
    """A window's key as the table holds it: the public JWK, and the private half sealed by KMS
    under an encryption context naming the window (None once the window has closed)."""

    window: KeyWindow
    jwk: Mapping[str, str]
    sealed_private: bytes | None

    @property
    def public(self) -> PublicKey:
        return PublicKey.of(self.jwk, self.window)
