"""The local API's bounded queue: how many requests are worked on at once, and how long others wait.

Starlette's thread pool (40 threads, shared with every route) would queue any number of requests,
each answered long after its client gave up: like API Gateway's throttle, take what can be worked on
now, let a request wait briefly for a place, and shed the rest with 429
(docs/adr/0046-local-api-gateway-every-method-and-a-bounded-queue.md).
"""

from __future__ import annotations

import asyncio


class Admission:
    """``max_in_flight`` places; a request waits at most ``queue_seconds`` for one."""

    def __init__(self, max_in_flight: int = 32, queue_seconds: float = 1.0) -> None:
        self._places = asyncio.Semaphore(max_in_flight)
        self._queue_seconds = queue_seconds

    async def admitted(self) -> bool:
        """Whether the request got a place (then ``release`` gives it back)."""
        if not self._places.locked():
            await self._places.acquire()  # a free place: taken without waiting
            return True
        try:
            await asyncio.wait_for(self._places.acquire(), self._queue_seconds)
        except TimeoutError:
            return False
        return True

    def release(self) -> None:
        self._places.release()
