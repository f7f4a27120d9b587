"""25 requests per second per key, in fixed one-second windows."""

from __future__ import annotations

import pytest

from phoneid.domain.errors import RateLimitExceeded
from phoneid.services.ratelimit import RateLimit
from tests.fakes import FakeClock, InMemoryRateLimiter


def limit() -> tuple[RateLimit, FakeClock]:
    clock = FakeClock()
    return RateLimit(InMemoryRateLimiter(), clock), clock


def spend(rate: RateLimit, key: str, hits: int) -> None:
    for _ in range(hits):
        rate.check(key)


def test_25_requests_in_one_second_pass() -> None:
    # Given a fresh limit
    rate, _ = limit()

    # When a client makes 25 requests within one second
    # Then none is refused
    spend(rate, "client-a", 25)


def test_the_26th_request_in_one_second_is_429_with_the_rate_limit_headers() -> None:
    # Given a client that made 25 requests in the current second
    rate, clock = limit()
    spend(rate, "client-a", 25)
    window = int(clock.now().timestamp())

    # When it makes a 26th
    with pytest.raises(RateLimitExceeded) as raised:
        rate.check("client-a")

    # Then it is 8018 / 429 with the rate-limit headers
    error = raised.value
    assert (error.code, error.http_status) == (8018, 429)
    assert error.headers == {
        "X-RateLimit-Limit": "25",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(window + 1),
        "Retry-After": "1",
    }


def test_requests_late_in_the_same_second_share_the_window() -> None:
    # Given 25 requests at the start of a second
    rate, clock = limit()
    spend(rate, "client-a", 25)

    # When the 26th comes 999 ms later
    clock.advance(milliseconds=999)

    # Then it is still refused
    with pytest.raises(RateLimitExceeded):
        rate.check("client-a")


def test_the_next_second_passes_again() -> None:
    # Given a client refused in the current second
    rate, clock = limit()
    spend(rate, "client-a", 25)
    with pytest.raises(RateLimitExceeded):
        rate.check("client-a")

    # When one second has passed
    clock.advance(seconds=1)

    # Then it may make 25 more requests
    spend(rate, "client-a", 25)


def test_different_keys_are_independent() -> None:
    # Given one client that used up its 25 requests this second
    rate, _ = limit()
    spend(rate, "client-a", 25)

    # When another client makes 25 requests in the same second
    # Then none of them is refused
    spend(rate, "client-b", 25)
    # And the first client is still refused its 26th
    with pytest.raises(RateLimitExceeded):
        rate.check("client-a")
