"""Which fraud policy evaluates a client's requests: its own document when the operator gave it one,
else the stack's default. Read from the clients table at most once a minute per container."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from phoneid.domain.evaluation import default_policy
from phoneid.domain.policy import Policy, parse_policy
from phoneid.ports import ClientStore, Clock

REFRESH = timedelta(seconds=60)


class PolicyBook:
    def __init__(self, clients: ClientStore, clock: Clock) -> None:
        self._clients = clients
        self._clock = clock
        self._cache: dict[str, tuple[datetime, Policy]] = {}
        self._lock = threading.Lock()

    def for_client(self, client_id: str) -> Policy:
        now = self._clock.now()
        with self._lock:
            cached = self._cache.get(client_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        client = self._clients.get(client_id)
        policy = parse_policy(dict(client.policy)) if client and client.policy else default_policy()
        with self._lock:
            self._cache[client_id] = (now + REFRESH, policy)
        return policy
