"""SMS send budgets across sessions: per destination number and per client, in hourly windows.

A new session does not reset them; they stop SMS pumping (toll fraud) and harassment of one number.
"""

from __future__ import annotations

from phoneid.domain.errors import RateLimitExceeded
from phoneid.ports import Clock, RateLimiter

_HOUR = 3600


class SendBudget:
    def __init__(self, limiter: RateLimiter, clock: Clock, *, per_number: int, per_client: int) -> None:
        self._limiter = limiter
        self._clock = clock
        self._per_number = per_number
        self._per_client = per_client

    def spend(self, phone_number: str, client_id: str) -> None:
        """Count one SMS, or refuse it (429, 8018) when either budget of this hour is used up."""
        now = int(self._clock.now().timestamp())
        window = now - now % _HOUR
        for key, limit, what in (
            (f"sms-number:{phone_number}", self._per_number, "this phone number"),
            (f"sms-client:{client_id}", self._per_client, "these credentials"),
        ):
            if self._limiter.hit(key, window, 2 * _HOUR) > limit:
                raise RateLimitExceeded(
                    f"Rate limit exceeded: the hourly SMS budget of {what} is used up",
                    headers={
                        "X-RateLimit-Limit": str(limit),
                        "X-RateLimit-Remaining": "0",
                        "X-RateLimit-Reset": str(window + _HOUR),
                        "Retry-After": str(window + _HOUR - now),
                    },
                )
