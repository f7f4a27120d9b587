"""The container: every part of a stack, each built once, on first use, from the parts it needs."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from phoneid.config import Settings
from phoneid.wiring.admin import Admin
from phoneid.wiring.connect import Connect
from phoneid.wiring.webhooks import Webhooks


class Container(Connect, Webhooks, Admin):
    """Each part is a cached property of one wiring module, so nothing is built (and no client made)
    at import time, and each imports its own module when first asked for: a handler loads only the
    services and adapters it uses. A part built on another gets the container's one instance of it.

    ``overrides`` stand in for the real parts of the same names (a cached property reads the
    instance's dict first: an override is simply pre-cached); a name that is no part is refused.
    """

    def __init__(self, settings: Settings, **overrides: Any) -> None:
        parts = self.parts()
        unknown = sorted(set(overrides) - parts)
        if unknown:
            raise TypeError(
                f"no such part of the container: {', '.join(unknown)} (its parts: {', '.join(sorted(parts))})"
            )
        self.settings = settings
        self.overrides = overrides
        self.__dict__.update(overrides)

    @classmethod
    def parts(cls) -> frozenset[str]:
        """The names of every part, as ``override`` accepts them."""
        return frozenset(
            name
            for klass in cls.__mro__
            for name, value in vars(klass).items()
            if isinstance(value, cached_property)
        )
