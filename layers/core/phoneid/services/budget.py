"""SMS send budgets across sessions: per destination number and per client, in hourly windows.

A new session does not reset them; they stop SMS pumping (toll fraud) and harassment of one number.
A text that was counted and then not sent (a later step failed) is given back, so the request's
retry counts one text for the one that goes out.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger

from phoneid.domain.errors import PhoneIdError, RateLimitExceeded
from phoneid.ports import Clock, RateLimiter

logger = Logger(child=True)

_HOUR = 3600

# The counters one text was counted in: (key, window start).
Spent = tuple[tuple[str, int], ...]


class SendBudget:
    def __init__(self, limiter: RateLimiter, clock: Clock, *, per_number: int, per_client: int) -> None:
        self._limiter = limiter
        self._clock = clock
        self._per_number = per_number
        self._per_client = per_client

    def spend(self, phone_number: str, client_id: str) -> Spent:
        """Count one SMS in both budgets, or in neither: refused (429, 8018) when either budget of this
        hour is used up, or failed (8000)."""
        now = int(self._clock.now().timestamp())
        window = now - now % _HOUR
        counted: list[tuple[str, int]] = []
        try:
            for key, limit, what in (
                (f"sms-number:{phone_number}", self._per_number, "this phone number"),
                (f"sms-client:{client_id}", self._per_client, "these credentials"),
            ):
                hits = self._limiter.hit(key, window, 2 * _HOUR)
                counted.append((key, window))
                if hits > limit:
                    raise RateLimitExceeded(
                        f"Rate limit exceeded: the hourly SMS budget of {what} is used up",
                        headers={
                            "X-RateLimit-Limit": str(limit),
                            "X-RateLimit-Remaining": "0",
                            "X-RateLimit-Reset": str(window + _HOUR),
                            "Retry-After": str(window + _HOUR - now),
                        },
                    )
        except PhoneIdError:
            self.refund(tuple(counted))
            raise
        return tuple(counted)

    def refund(self, spent: Spent) -> None:
        """Give back a text that was counted and not sent. Best effort: a refund that fails leaves the
        budget one text lower for the rest of the hour, the safe side."""
        for key, window in spent:
            try:
                self._limiter.release(key, window)
            except PhoneIdError:
                logger.warning("SMS budget not given back", extra={"budget": key.split(":", 1)[0]})
