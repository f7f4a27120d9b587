"""The ports behind the signals, and one gathering: the reads several sources share, made once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from phoneid.domain.identity import Claimed, Identity
from phoneid.domain.policy import Policy, Signal
from phoneid.domain.signals import NumberHistory
from phoneid.ports import (
    ActivityLog,
    CallForwardingSource,
    ChangeEventLog,
    CodeMac,
    DeviceStatusSource,
    IdentitySource,
    KycMatchSource,
    NumberHistorySource,
    NumberRecyclingSource,
    SignalLists,
    SimSwapSource,
    TenureSource,
)
from phoneid.services.signals.subject import Subject


@dataclass
class SignalSources:
    """The ports behind the signals; a carrier port is None when the stack has no operator."""

    lists: SignalLists
    activity: ActivityLog
    change_events: ChangeEventLog
    history: NumberHistorySource
    identities: IdentitySource
    mac: CodeMac
    sim_swap: SimSwapSource | None = None
    call_forwarding: CallForwardingSource | None = None
    tenure: TenureSource | None = None
    recycling: NumberRecyclingSource | None = None
    kyc: KycMatchSource | None = None
    device_status: DeviceStatusSource | None = None


@dataclass
class Request:
    """One gathering: memoised reads that several sources share (the number's history, its identity)."""

    subject: Subject
    policy: Policy
    now: datetime
    sources: SignalSources
    wanted: frozenset[Signal]
    _memo: dict[str, _Pending] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def phone(self) -> str:
        """The number asked about (gathering asks no source without one)."""
        assert self.subject.phone_number is not None
        return self.subject.phone_number

    def history(self) -> NumberHistory:
        """The number's history in Identity Manager, read once per gathering."""
        window = timedelta(days=self.policy.windows.shortTenureDays)
        history: NumberHistory = self._once(
            "history",
            lambda: self.sources.history.history(self.subject.client_id, self.phone, self.now - window),
        )
        return history

    def person(self) -> tuple[Claimed, Identity | None]:
        """The claimed person, and the identity records of the number (looked up once)."""
        subject = self.subject
        if subject.identity_checked:
            record = subject.identity
        else:
            record = self._once("identity", lambda: self.sources.identities.find(self.phone))
        return subject.claimed or Claimed(), record

    def _once(self, name: str, read: Callable[[], Any]) -> Any:
        with self._lock:
            if name not in self._memo:
                self._memo[name] = _Pending(read)
            pending = self._memo[name]
        return pending.value()


def hours_since(now: datetime, moment: datetime | None) -> float | None:
    return None if moment is None else max(0.0, (now - moment).total_seconds() / 3600)


class _Pending:
    """A read made by the first source that needs it; the others wait for its value (or its error)."""

    def __init__(self, read: Callable[[], Any]) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None

    def value(self) -> Any:
        with self._lock:
            if not self._done:
                try:
                    self._value = self._read()
                except BaseException as error:  # re-raised to every source that needs it
                    self._error = error
                self._done = True
        if self._error is not None:
            raise self._error
        return self._value
