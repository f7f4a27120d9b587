"""What every part is built on: the stack's settings, its clock, and a Sandbox stack's catalogue."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from phoneid.config import Settings

if TYPE_CHECKING:
    from phoneid.domain.sandbox import Catalogue
    from phoneid.ports import Clock


class Base:
    settings: Settings

    @cached_property
    def clock(self) -> Clock:
        from phoneid.adapters.clock import SystemClock

        return SystemClock()

    @cached_property
    def catalogue(self) -> Catalogue | None:
        """The test users of a Sandbox stack; None on production stacks."""
        from phoneid.domain.sandbox import Catalogue

        return Catalogue.load(self.settings.region) if self.settings.tier == "sandbox" else None
