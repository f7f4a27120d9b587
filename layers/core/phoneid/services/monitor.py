"""The change monitor: one pass over every active enrolled identity, asking the signal sources again.

A pass is a workflow over parallel-scan segments (``phoneid.services.monitor_passes``), which
checks each page of identities with :meth:`ChangeMonitor.check_page`.

Each identity's number is observed through the same ports the fraud policy uses (SIM swap, number
recycling, device reachability and roaming from the carrier; port events and line types from the
operator's lists, else the numbering plan) and compared with what the previous pass saw (rules:
``phoneid.domain.monitor``). Every change becomes a :class:`ChangeEvent` with a random id, recorded in
the change-event log (the fraud policy reads it) and, when the client has a webhook, queued for
delivery; the identity's state is saved only after that, so a failure before it finds the change
again on the next pass.

Push before poll: where the operator offers CAMARA subscriptions, the pass first makes sure each
identity has them (``phoneid.services.push``) and does not ask a pushed signal that has its
baseline; the operator's notifications raise those changes (``phoneid.services.push_notifications``).

US numbers only (as Prove's Identity Manager); inactive and disenrolled identities are not walked.
A source that fails is skipped for that identity: a failure never raises an event. In Sandbox stacks
the carrier ports are None and only the lists and the numbering plan are asked.
"""

from __future__ import annotations

import concurrent.futures
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from aws_lambda_powertools import Logger

from phoneid.domain import lists
from phoneid.domain.enrollment import Enrollment
from phoneid.domain.monitor import Fact, change_events, compare, needs_baseline
from phoneid.domain.phone import mask
from phoneid.domain.push import FACTS
from phoneid.domain.signals import ChangeEvent, ChangeKind, ListKind
from phoneid.ports import (
    ChangeEventLog,
    ClientStore,
    Clock,
    DeviceStatusSource,
    MonitorStateStore,
    NumberRecyclingSource,
    SignalLists,
    SimSwapSource,
    WebhookQueue,
)
from phoneid.services.pools import submit_in_context

if TYPE_CHECKING:
    from phoneid.services.push import PushSubscriptions

logger = Logger(child=True)

MONITORED_COUNTRIES: Final = frozenset({"US"})
# A pass stops starting identities when less than this is left of its invocation (seconds): one
# identity asks at most six sources, each bounded by its adapter's socket timeout.
TIME_MARGIN_SECONDS: Final = 30.0


@dataclass
class MonitorSources:
    """The ports the monitor asks; a carrier port is None when the stack has no operator."""

    lists: SignalLists
    sim_swap: SimSwapSource | None = None
    recycling: NumberRecyclingSource | None = None
    device_status: DeviceStatusSource | None = None


@dataclass(frozen=True)
class PageReport:
    """What checking some identities came to; summed over pages."""

    checked: int = 0  # identities checked (in a resumed pass: or checked by it before)
    events: int = 0  # change events found
    queued: int = 0  # of those, queued for a webhook
    skipped: int = 0  # not monitored (not US) or failed: not checked again in this pass
    late: int = 0  # not checked for want of time: the page is to be checked again

    def __add__(self, other: PageReport) -> PageReport:
        return PageReport(
            self.checked + other.checked,
            self.events + other.events,
            self.queued + other.queued,
            self.skipped + other.skipped,
            self.late + other.late,
        )


@dataclass
class _Pass:
    """One pass: its time, the clients' webhooks (read once) and the events already logged."""

    now: datetime
    clients: ClientStore
    time_left: Callable[[], float] | None
    pass_id: str  # each identity is checked once in a pass
    _webhooks: dict[str, bool] = field(default_factory=dict)
    _logged: set[tuple[str, str, ChangeKind, datetime]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def has_webhook(self, client_id: str) -> bool:
        with self._lock:
            if client_id not in self._webhooks:
                client = self.clients.get(client_id)
                self._webhooks[client_id] = bool(client and client.webhook and client.enabled)
            return self._webhooks[client_id]

    def first_of(self, events: list[ChangeEvent]) -> list[ChangeEvent]:
        """The events no other identity of the same client and number logged in this pass: one
        change of a number counts once for the fraud policy, however many identities it has."""
        fresh = []
        with self._lock:
            for event in events:
                key = (event.client_id, event.phone_number, event.kind, event.occurred_at)
                if key not in self._logged:
                    self._logged.add(key)
                    fresh.append(event)
        return fresh

    def out_of_time(self) -> bool:
        return self.time_left is not None and self.time_left() < TIME_MARGIN_SECONDS

    def logged(self, event: ChangeEvent) -> ChangeEvent:
        """The event as the change-event log keeps it: its id derived from the pass, the client,
        the number, the kind and the time, so that the pages, segments and retries of one pass log
        a number's change once however many identities it has (the log keeps one item per id)."""
        parts = (
            self.pass_id,
            event.client_id,
            event.phone_number,
            event.kind.value,
            event.occurred_at.isoformat(),
        )
        name = "|".join(parts)
        return replace(event, event_id=str(uuid.uuid5(_LOG_NAMESPACE, name)))


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat()


class ChangeMonitor:
    def __init__(
        self,
        *,
        states: MonitorStateStore,
        sources: MonitorSources,
        change_events: ChangeEventLog,
        queue: WebhookQueue,
        clients: ClientStore,
        clock: Clock,
        workers: int = 8,
        push: PushSubscriptions | None = None,
    ) -> None:
        self._states = states
        self._sources = sources
        self._change_events = change_events
        self._queue = queue
        self._clients = clients
        self._clock = clock
        self._workers = workers
        # Push before poll: a signal the operator pushes for an identity is not polled for it.
        self._push = push

    def check_page(
        self,
        page: list[Enrollment],
        *,
        pass_id: str,
        started_at: datetime,
        time_left: Callable[[], float] | None = None,
    ) -> PageReport:
        """Check one page of identities in pass ``pass_id``, started at ``started_at`` (the time of
        the events it finds that have no time of their own); ``time_left``: seconds left of the
        invocation, to stop in time. An identity this pass checked already is counted, not checked
        again; ``late`` counts those left for want of time."""
        walk = _Pass(now=started_at, clients=self._clients, time_left=time_left, pass_id=pass_id)
        with concurrent.futures.ThreadPoolExecutor(self._workers, thread_name_prefix="monitor") as pool:
            return self._check_page(page, walk, pool)

    def out_of_time(self, time_left: Callable[[], float] | None) -> bool:
        return time_left is not None and time_left() < TIME_MARGIN_SECONDS

    def _check_page(
        self, page: list[Enrollment], walk: _Pass, pool: concurrent.futures.ThreadPoolExecutor
    ) -> PageReport:
        monitored = [e for e in page if e.country in MONITORED_COUNTRIES]
        report = PageReport(skipped=len(page) - len(monitored))
        checks = [submit_in_context(pool, self._check, e, walk) for e in monitored]
        for outcome in (check.result() for check in checks):
            report = report + outcome
        return report

    # --- one identity --------------------------------------------------------------------------

    def _check(self, enrollment: Enrollment, walk: _Pass) -> PageReport:
        """One identity's outcome: checked (with its events found and queued), failed or late."""
        if walk.out_of_time():
            return PageReport(late=1)
        where = {"serviceId": enrollment.service_id, "phone": mask(enrollment.phone_number)}
        try:
            state = self._states.monitor_state(enrollment.client_id, enrollment.service_id)
            if state is not None and state.pass_id == walk.pass_id:
                return PageReport(checked=1)  # checked by this pass before it was resumed
            previous = None if needs_baseline(state, enrollment.updated_at) else state
            # A pushed signal is polled only while it has no baseline (to compare with if its
            # subscription ends); then its notifications keep the state current.
            pushed = self._push.ensure(enrollment) if self._push is not None else frozenset()
            known = previous.facts if previous is not None else {}
            skip = {FACTS[signal] for signal in pushed if FACTS[signal].value in known}
            observed = self._observe(enrollment, skip=skip)
            changes, saved = compare(previous, observed, now=walk.now, home_country=enrollment.country)
            found = change_events(enrollment, changes)
            if found:
                self._change_events.append([walk.logged(e) for e in walk.first_of(found)])
            queued = 0
            if found and walk.has_webhook(enrollment.client_id):
                for event in found:
                    self._queue.send(event)
                    queued += 1
            # Events are dated at the pass's start; the state at the check itself (activations after it).
            saved = replace(saved, pass_id=walk.pass_id, checked_at=self._clock.now())
            self._states.save_monitor_state(enrollment.client_id, enrollment.service_id, saved)
        except Exception as error:  # one identity's failure never stops the pass
            logger.warning("monitor check failed", extra={**where, "error_type": type(error).__name__})
            return PageReport(skipped=1)
        for event in found:
            logger.info(
                "change event",
                extra={
                    **where,
                    "eventId": event.event_id,
                    "eventType": event.kind.value,
                    "queued": queued > 0,
                },
            )
        return PageReport(checked=1, events=len(found), queued=queued)

    def _observe(self, enrollment: Enrollment, skip: set[Fact]) -> dict[Fact, Any]:
        """The facts the sources could give, but those in ``skip`` (pushed); a failed source is
        logged and left out."""
        phone = enrollment.phone_number
        sources = self._sources
        asks: list[tuple[str, Fact, Callable[[], Any]]] = [
            ("port-events", Fact.PORT, lambda: self._ported_at(phone)),
            ("line-type", Fact.LINE_TYPE, lambda: self._line_type(phone)),
        ]
        if sources.sim_swap is not None:
            sim_swap = sources.sim_swap
            asks.append(("sim-swap", Fact.SIM_CHANGE, lambda: _iso(sim_swap.latest_change(phone))))
        if sources.recycling is not None:
            recycling, since = sources.recycling, enrollment.created_at.date()
            asks.append(("recycling", Fact.RECYCLED, lambda: recycling.recycled_since(phone, since)))
        if sources.device_status is not None:
            status = sources.device_status
            asks.append(("reachability", Fact.REACHABLE, lambda: status.reachable(phone)))
            asks.append(("roaming", Fact.ROAMING, lambda: status.roaming_country(phone)))
        observed: dict[Fact, Any] = {}
        for name, fact, ask in asks:
            if fact in skip:
                continue
            try:
                value = ask()
            except Exception as error:  # a failed source is skipped, never an event
                logger.warning(
                    "monitor source failed",
                    extra={
                        "source": name,
                        "serviceId": enrollment.service_id,
                        "error_type": type(error).__name__,
                    },
                )
                continue
            if value is not _UNKNOWN:
                observed[fact] = value
        return observed

    def _ported_at(self, phone: str) -> str | None:
        key = lists.phone_key(phone)
        entry = self._sources.lists.lookup(ListKind.PORT_EVENTS, [key]).get(key)
        if entry is None or not entry.values.get("portedAt"):
            return None
        return _iso(datetime.fromisoformat(str(entry.values["portedAt"])))

    def _line_type(self, phone: str) -> Any:
        key = lists.phone_key(phone)
        entry = self._sources.lists.lookup(ListKind.LINE_TYPES, [key]).get(key)
        registered = entry.values.get("lineType") if entry else None
        line_type = registered or lists.number_line_type(phone)
        return _UNKNOWN if line_type == "unknown" else str(line_type)


_LOG_NAMESPACE: Final = uuid.UUID("0c6f7a52-4b1e-4d5e-9a63-5d0f1c2b7e01")
_UNKNOWN: Final = object()  # a source that answered but knows nothing: not an observation
