"""The request-rate limit: 25 requests per second per client (per credential), fixed one-second windows;
and the brake on failed authentications at ``POST /token``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from aws_lambda_powertools import Logger

from phoneid.domain.errors import RateLimitExceeded, Unauthorized
from phoneid.ports import Clock, RateLimiter

logger = Logger(child=True)

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


# --- failed authentication --------------------------------------------------------------------------
# Guessing a client secret (or a refresh token) must be slow: failures are counted per client id as
# sent and per source address in fixed windows; reaching a limit refuses every attempt, right or wrong,
# until the end of the next window (docs/adr/0044-failed-authentications-a-lockout-not-a-delay.md).
AUTH_FAILURE_WINDOW_SECONDS = 300
AUTH_FAILURES_PER_CLIENT = 10
AUTH_FAILURES_PER_SOURCE = 50
_MAX_CLIENT_ID = 128  # longer ids are never issued; longer keys would only bloat the table

T = TypeVar("T")


class AuthThrottle:
    def __init__(
        self,
        counters: RateLimiter,
        clock: Clock,
        *,
        per_client: int = AUTH_FAILURES_PER_CLIENT,
        per_source: int = AUTH_FAILURES_PER_SOURCE,
        window_seconds: int = AUTH_FAILURE_WINDOW_SECONDS,
    ) -> None:
        self._counters = counters
        self._clock = clock
        self._per_client = per_client
        self._per_source = per_source
        self._window = window_seconds

    def guard(self, client_id: str, source: str, attempt: Callable[[], T]) -> T:
        """``attempt()`` unless either key is locked out (429, 8018); its Unauthorized counts as a failure.

        Whether ``client_id`` exists plays no part: an unknown id is counted and refused alike.
        """
        client_id = client_id[:_MAX_CLIENT_ID]
        limits = self._limits(client_id, source)
        now = int(self._clock.now().timestamp())
        window = now - now % self._window
        self._refuse_if_locked(limits, now, window, client_id, source)
        try:
            return attempt()
        except Unauthorized:
            failures = [self._counters.hit(key, window, 3 * self._window) for key, _ in limits]
            # The audit trail of guessing: who and from where, never what was sent as the secret.
            logger.warning(
                "authentication failed",
                extra={"clientId": client_id, "sourceIp": source, "failuresInWindow": max(failures)},
            )
            raise

    def _limits(self, client_id: str, source: str) -> list[tuple[str, int]]:
        limits = [(f"auth-fail:source:{source}", self._per_source)]
        if client_id:
            limits.insert(0, (f"auth-fail:client:{client_id}", self._per_client))
        return limits

    def _refuse_if_locked(
        self, limits: list[tuple[str, int]], now: int, window: int, client_id: str, source: str
    ) -> None:
        previous = window - self._window
        counts = self._counters.counts([(key, w) for key, _ in limits for w in (window, previous)])
        locked_until = 0
        for index, (_, limit) in enumerate(limits):
            current, before = counts[2 * index], counts[2 * index + 1]
            if current >= limit:
                locked_until = max(locked_until, window + 2 * self._window)
            elif before >= limit:
                locked_until = max(locked_until, window + self._window)
        if locked_until:
            retry_after = max(1, locked_until - now)
            logger.warning(
                "authentication refused: too many failures",
                extra={"clientId": client_id, "sourceIp": source, "retryAfter": retry_after},
            )
            raise RateLimitExceeded(
                "Rate limit exceeded: too many failed authentications; wait for Retry-After seconds",
                headers={"Retry-After": str(retry_after)},
            )
