"""The access token: fetched with the client credentials grant, kept, and fetched again before it
expires (docs/api.md#post-token)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from phoneid_client.models import TokenResponse

# A token is fetched again when less than this much of its life is left: 60 seconds, or a tenth of
# its life when that is longer (6 minutes of the API's hour), so that a call never leaves with a
# token about to expire on its way.
MIN_MARGIN_SECONDS = 60.0
MARGIN_SHARE = 0.1


@dataclass(frozen=True)
class _Held:
    value: str
    refresh_at: float


class AccessTokens:
    """The client's access token, fetched by ``fetch`` when there is none or its time has come.

    ``clock`` gives seconds on a monotonic scale (``time.monotonic`` unless a test injects one).
    Thread-safe: concurrent calls wait for one fetch.
    """

    def __init__(self, fetch: Callable[[], TokenResponse], clock: Callable[[], float]) -> None:
        self._fetch = fetch
        self._clock = clock
        self._held: _Held | None = None
        self._lock = threading.Lock()

    def current(self) -> str:
        with self._lock:
            held = self._held
            if held is None or self._clock() >= held.refresh_at:
                held = self._held = self._fetched()
            return held.value

    def renew(self, rejected: str) -> str:
        """A new token after the API refused ``rejected`` with 401 (revoked, or keys rotated); a token
        another thread fetched meanwhile is kept."""
        with self._lock:
            if self._held is None or self._held.value == rejected:
                self._held = self._fetched()
            return self._held.value

    def _fetched(self) -> _Held:
        fetched_at = self._clock()
        answer = self._fetch()
        life = float(answer.expires_in)
        margin = min(max(MIN_MARGIN_SECONDS, life * MARGIN_SHARE), life / 2)
        return _Held(answer.access_token, fetched_at + life - margin)
