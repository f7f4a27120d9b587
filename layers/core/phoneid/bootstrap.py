"""Composition root's public face: the process's container of real adapters, built on first use.

Handlers ask ``container()`` for their service; tests replace parts with
``override(clock=FakeClock(), ...)`` and start over with ``reset()``. What each part is built from
is in ``phoneid.wiring``, one module per thing it wires
(docs/adr/0086-the-composition-root-by-what-it-wires.md).
"""

from __future__ import annotations

from typing import Any

from phoneid.config import Settings
from phoneid.wiring.container import Container

__all__ = ["Container", "container", "override", "reset"]

_container: Container | None = None


def container() -> Container:
    global _container
    if _container is None:
        _container = Container(Settings.from_env())
    return _container


def override(**parts: Any) -> Container:
    """A fresh container with ``parts`` in place of the real ones (earlier overrides kept). A name
    the container has no part of is refused (``TypeError``), and the container stays as it was."""
    global _container
    current = container()
    _container = Container(current.settings, **{**current.overrides, **parts})
    return _container


def reset(settings: Settings | None = None) -> None:
    """Forget the container: the next is built on ``settings``, by default the environment's (the
    operator's CLI gives those of the stack it targets)."""
    global _container
    _container = None if settings is None else Container(settings)
