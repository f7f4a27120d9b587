"""The local stack's clock: real time plus an offset that tests move forward (never backward).

Lets browser and end-to-end tests reach the 2-minute OTP, 3-minute link and 15-minute session
limits without sleeping (``POST /_local/clock {"advanceSeconds": 121}``).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


class OffsetClock:
    def __init__(self) -> None:
        self._offset = timedelta()
        self._lock = threading.Lock()

    def now(self) -> datetime:
        return datetime.now(UTC) + self._offset

    @property
    def offset_seconds(self) -> float:
        return self._offset.total_seconds()

    def catch_up(self, offset_seconds: float) -> None:
        """Take another clock's offset (a worker process following the local stack's clock)."""
        with self._lock:
            self._offset = max(self._offset, timedelta(seconds=offset_seconds))

    def advance(self, seconds: float) -> datetime:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        with self._lock:
            self._offset += timedelta(seconds=seconds)
        return self.now()
