"""Appending decision records to their clients' trees, from the records table's stream, exactly once
(docs/adr/0120-a-decision-history-verified-offline.md).

A run reads each shard from where the last run left it and appends the shard's leaves in its order.
What one read gives is committed in cuts of as many clients as the store commits together: each
cut's appends and the shard's new position commit together, so a run stopped anywhere (an error,
its time up) leaves every record either appended once or not yet, and the next run goes on from
there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from aws_lambda_powertools import Logger

from phoneid.domain.history import Append, HistoryContended, StreamedLeaf, appended
from phoneid.ports import DecisionStream, HistoryStore

logger = Logger(child=True)

PAGE = 1000  # GetRecords' most
ENOUGH_TIME = 20.0  # seconds a read and its commits are given at most; a run stops with less left


@dataclass
class RunReport:
    shards: int = 0
    read: int = 0  # reads of a shard that gave records, leaves or not
    appended: int = 0
    clients: set[str] = field(default_factory=set)
    contended: bool = False

    def as_dict(self) -> dict[str, int | bool]:
        return {
            "shards": self.shards,
            "read": self.read,
            "appended": self.appended,
            "clients": len(self.clients),
            "contended": self.contended,
        }


class DecisionSequencer:
    def __init__(self, stream: DecisionStream, store: HistoryStore, *, page: int = PAGE) -> None:
        self._stream = stream
        self._store = store
        self._page = page

    def run(self, seconds_left: Callable[[], float]) -> RunReport:
        """Append what every shard holds past its position, while there is time for another read."""
        report = RunReport()
        for shard in self._stream.shards():
            after, ended = self._store.position(shard)
            if ended:
                continue
            report.shards += 1
            try:
                self._drain(shard, after, seconds_left, report)
            except HistoryContended:
                # Another run is appending (a run by hand beside the schedule's): it goes on from here.
                report.contended = True
                break
            if seconds_left() < ENOUGH_TIME:
                break
        logger.info("decision history appended", extra=report.as_dict())
        return report

    def _drain(
        self, shard: str, after: str | None, seconds_left: Callable[[], float], report: RunReport
    ) -> None:
        while seconds_left() >= ENOUGH_TIME:
            page = self._stream.read(shard, after, self._page)
            if page.last is None or page.last == after:  # nothing new in the shard
                if page.ended and after is not None:
                    self._store.commit(shard, after, after, (), ended=True)
                return
            for last, leaves in cuts(page.leaves, page.last, self._store.most_clients):
                appends = self._appends(leaves)
                self._store.commit(shard, after, last, appends, ended=page.ended and last == page.last)
                after = last
                report.appended += len(leaves)
                report.clients.update(append.client_id for append in appends)
            report.read += 1
            if page.ended:
                return

    def _appends(self, leaves: Sequence[StreamedLeaf]) -> list[Append]:
        by_client: dict[str, list[StreamedLeaf]] = {}
        for leaf in leaves:
            by_client.setdefault(leaf.client_id, []).append(leaf)
        if not by_client:
            return []
        frontiers = self._store.frontiers(by_client)
        return [appended(client_id, frontiers[client_id], own) for client_id, own in by_client.items()]


def cuts(leaves: Sequence[StreamedLeaf], last: str, clients: int) -> Iterator[tuple[str, list[StreamedLeaf]]]:
    """The leaves of one read in consecutive runs of at most ``clients`` clients, each with the
    sequence number its commit moves the shard to: the last leaf's, and the read's last for the last
    run (records past the last leaf that are not leaves are read past with it)."""
    run: list[StreamedLeaf] = []
    seen: set[str] = set()
    for leaf in leaves:
        if leaf.client_id not in seen and len(seen) == clients:
            yield run[-1].sequence, run
            run, seen = [], set()
        run.append(leaf)
        seen.add(leaf.client_id)
    yield last, run
