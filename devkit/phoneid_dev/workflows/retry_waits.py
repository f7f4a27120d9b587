"""Retry waits: moto really sleeps ``IntervalSeconds * BackoffRate^n``; ``retry_delay_scale``
shrinks them (tests set it to 0). The ``Retry`` policy itself is unchanged."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from phoneid_dev.patches import Patch, register

if TYPE_CHECKING:
    pass


# Multiplies every Retry interval of every execution (0: retry at once). Read at each wait.
retry_delay_scale = 1.0


class ScaledTime:
    @staticmethod
    def sleep(seconds: float) -> None:
        scaled = seconds * retry_delay_scale
        if scaled > 0:
            time.sleep(scaled)


PATCHES = register(
    Patch(
        why="Retry waits scaled (tests wait none), the Retry policy unchanged",
        module="moto.stepfunctions.parser.asl.component.common.retry.retrier_decl",
        attribute="time",
        replace=lambda _: ScaledTime,
        expected=lambda original: original is time,
    ),
)
