"""The request-rate limit: 25 requests per second per client (per credential), fixed one-second windows."""

from __future__ import annotations

from phoneid.domain.errors import RateLimitExceeded
from phoneid.ports import Clock, RateLimiter

REQUESTS_PER_SECOND = 25
_WINDOW_TTL_SECONDS = 60


class RateLimit:
    def __init__(self, limiter: RateLimiter, clock: Clock, limit: int = REQUESTS_PER_SECOND) -> None:
        self._limiter = limiter
        self._clock = clock
        self._limit = limit

    def check(self, key: str) -> None:
        window = int(self._clock.now().timestamp())
        hits = self._limiter.hit(key, window, _WINDOW_TTL_SECONDS)
        if hits > self._limit:
            raise RateLimitExceeded(
                headers={
                    "X-RateLimit-Limit": str(self._limit),
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": str(window + 1),
                    "Retry-After": "1",
                }
            )
