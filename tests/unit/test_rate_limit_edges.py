"""The 25-per-second limit at its edges (docs/mutation.md): request 25 and 26 within one second, the
last millisecond of a second and the first of the next, and how long a second's counter is kept."""

from __future__ import annotations

from datetime import timedelta

import pytest

from phoneid.domain.errors import RateLimitExceeded
from phoneid.services.ratelimit import REQUESTS_PER_SECOND, RateLimit
from tests.fakes import START, FakeClock, InMemoryRateLimiter


class RecordingLimiter(InMemoryRateLimiter):
    def __init__(self) -> None:
        super().__init__()
        self.ttls: list[int] = []

    def hit(self, key: str, window_start: int, ttl_seconds: int) -> int:
        self.ttls.append(ttl_seconds)
        return super().hit(key, window_start, ttl_seconds)


def test_the_limit_is_25_a_second() -> None:
    assert REQUESTS_PER_SECOND == 25


def test_request_25_passes_and_26_is_refused_within_one_second() -> None:
    # Given a clock at the start of a second, and 24 requests spread over it
    clock = FakeClock(START)
    rate = RateLimit(InMemoryRateLimiter(), clock)
    for _ in range(24):
        rate.check("client-a")
        clock.advance(milliseconds=40)

    # When the 25th comes at 960 ms and the 26th at the second's last millisecond
    rate.check("client-a")
    clock.current = START + timedelta(milliseconds=999)

    # Then the 25th passed and the 26th is refused, to be retried at the next second
    with pytest.raises(RateLimitExceeded) as raised:
        rate.check("client-a")
    assert raised.value.headers["X-RateLimit-Reset"] == str(int(START.timestamp()) + 1)


def test_the_first_request_of_the_next_second_passes() -> None:
    clock = FakeClock(START + timedelta(milliseconds=999))
    rate = RateLimit(InMemoryRateLimiter(), clock)
    for _ in range(25):
        rate.check("client-a")
    clock.current = START + timedelta(seconds=1)
    rate.check("client-a")


def test_a_limit_of_another_size_is_held_at_its_own_edge() -> None:
    rate = RateLimit(InMemoryRateLimiter(), FakeClock(), limit=3)
    for _ in range(3):
        rate.check("client-a")
    with pytest.raises(RateLimitExceeded) as raised:
        rate.check("client-a")
    assert raised.value.headers["X-RateLimit-Limit"] == "3"


def test_a_seconds_counter_is_kept_a_minute() -> None:
    limiter = RecordingLimiter()
    RateLimit(limiter, FakeClock()).check("client-a")
    assert limiter.ttls == [60]
