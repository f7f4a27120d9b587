"""What a source of signals is: the signals it answers, the timeout kind it waits under, and how it
reads them. A carrier source also names the port it needs, as a typed accessor; a stack without an
operator has none of those ports, and gathering leaves their sources out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from phoneid.domain.policy import Signal, SourceName
from phoneid.services.signals.request import Request, SignalSources

Read = Callable[[Request], Mapping[Signal, Any]]
Port = TypeVar("Port")


class Source(Protocol):
    @property
    def name(self) -> str:
        """What the logs call it."""
        ...

    @property
    def kind(self) -> SourceName: ...

    @property
    def signals(self) -> frozenset[Signal]: ...

    def reader(self, ports: SignalSources) -> Read | None:
        """How to read it with these ports; None when a port it needs is not configured."""
        ...


@dataclass(frozen=True)
class OwnSource:
    """A source PhoneID always has: the operator's lists, its own records."""

    name: str
    kind: SourceName
    signals: frozenset[Signal]
    read: Read

    def reader(self, ports: SignalSources) -> Read | None:
        return self.read


@dataclass(frozen=True)
class CarrierSource(Generic[Port]):
    """A source asked of the operator (CAMARA) through ``port``, when the stack has one."""

    name: str
    signals: frozenset[Signal]
    port: Callable[[SignalSources], Port | None]
    ask: Callable[[Port, Request], Mapping[Signal, Any]]
    kind: SourceName = "carrier"

    def reader(self, ports: SignalSources) -> Read | None:
        port = self.port(ports)
        if port is None:
            return None
        ask = self.ask
        return lambda request: ask(port, request)
