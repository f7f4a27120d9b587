"""The production gatherer: every source the policy needs, at once, in a pool of its own.

A source waits at most its kind's timeout, and all together the policy's deadline; a source that
fails or is too slow gives ``SOURCE_FAILED`` for its own signals only.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools import Logger

from phoneid.domain.evaluation import SOURCE_FAILED
from phoneid.domain.policy import Policy, Signal
from phoneid.ports import Clock
from phoneid.services.pools import submit_in_context
from phoneid.services.signals.carrier_sources import CARRIER_SOURCES
from phoneid.services.signals.derived import derived, with_inputs
from phoneid.services.signals.list_sources import LIST_SOURCES
from phoneid.services.signals.record_sources import RECORD_SOURCES
from phoneid.services.signals.request import Request, SignalSources
from phoneid.services.signals.source import Read, Source
from phoneid.services.signals.subject import Subject, flow_observations

logger = Logger(child=True)

SOURCES: tuple[Source, ...] = (*CARRIER_SOURCES, *LIST_SOURCES, *RECORD_SOURCES)
# Enough for a batch's items (eight at a time) each asking every source at once.
POOL_THREADS = 64


class SignalGatherer:
    def __init__(self, sources: SignalSources, clock: Clock) -> None:
        self._sources = sources
        self._clock = clock
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def gather(self, subject: Subject, policy: Policy) -> dict[Signal, Any]:
        observed = flow_observations(subject)
        if not subject.ask_sources or subject.phone_number is None:
            return observed
        needed = policy.needed_signals(subject.flow)
        wanted = with_inputs(needed) - set(observed)
        request = Request(subject, policy, self._clock.now(), self._sources, wanted)
        readers = {
            source: read
            for source in SOURCES
            if source.signals & wanted and (read := source.reader(self._sources)) is not None
        }
        sourced = self._run(request, readers) | observed
        sourced |= derived(sourced, needed)
        # What the flow knows stays whole (the assurance level reads it); sources only as needed.
        return observed | {signal: value for signal, value in sourced.items() if signal in needed}

    def _run(self, request: Request, readers: Mapping[Source, Read]) -> dict[Signal, Any]:
        """Every source at once; each waits at most its kind's timeout, and all together the deadline.
        Each read runs in the caller's context (``submit_in_context``), so what the request keeps
        there (log keys, whose AWS calls these are) reaches the pool's threads."""
        policy = request.policy
        started = time.monotonic()
        deadline = started + policy.sources.deadlineMs / 1000
        pool = self._threads()
        futures = {source: submit_in_context(pool, read, request) for source, read in readers.items()}
        observed: dict[Signal, Any] = {}
        for source, future in futures.items():
            signals = source.signals & request.wanted
            limit = min(started + policy.sources.timeout_seconds(source.kind), deadline)
            try:
                answer = future.result(timeout=max(0.0, limit - time.monotonic()))
            except Exception as error:  # a source's failure is an observation, not a failed request
                future.cancel()
                logger.warning(
                    "signal source failed", extra={"source": source.name, "error_type": type(error).__name__}
                )
                observed |= dict.fromkeys(signals, SOURCE_FAILED)
                continue
            observed |= {signal: value for signal, value in answer.items() if signal in signals}
        return observed

    def _threads(self) -> concurrent.futures.ThreadPoolExecutor:
        """This gatherer's pool, made on first use (a container that never gathers starts no thread)."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=POOL_THREADS, thread_name_prefix="signals"
                )
            return self._pool
