"""HistoryStore on ``DecisionHistoryTable``: each client's tree, and where each stream shard of the
records table was appended to (docs/adr/0120-a-decision-history-verified-offline.md).

Items:

- ``{clientId}#log``: the client's log head: its size and the frontier of its tree (the RFC 9162
  subtree hashes of its right edge, largest first, one after the other).
- ``{clientId}#log#{first leaf, 12 digits}``: the leaves one append added: the records' ids (one a
  line) and their leaf hashes (one after the other). Never rewritten, never expired: a leaf outlives
  its record (erased, or past the retention).
- ``~stream#{shardId}``: the sequence number of the last stream record appended from that shard, and
  whether the shard is read to its end; kept two days (a stream keeps its records one).

An append commits in one ``TransactWriteItems``: each client's leaves item (new), its head (on
condition that its size is the one read) and the shard's position (on condition that it is the one
read). A run that lost the race to another is told so, and nothing of it is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from phoneid.adapters.aws import internal_error, provider_errors
from phoneid.adapters.dynamodb.batch_io import read_keys
from phoneid.domain.history import Append, HistoryContended
from phoneid.domain.merkle import HASH_SIZE, Frontier
from phoneid.ports import Clock

POSITION_KEPT = timedelta(days=2)
MAX_APPENDS = 49  # with the shard's position: a transaction's 100 actions, two for each client


def head_pk(client_id: str) -> str:
    return f"{client_id}#log"


def leaves_pk(client_id: str, first: int) -> str:
    return f"{client_id}#log#{first:012d}"


def position_pk(shard_id: str) -> str:
    return f"~stream#{shard_id}"  # no client id holds "~": never one of a client's keys


class DynamoHistoryStore:
    most_clients = MAX_APPENDS

    def __init__(self, dynamodb: Any, table: str, clock: Clock) -> None:
        self._db = dynamodb
        self._table = table
        self._clock = clock

    def position(self, shard_id: str) -> tuple[str | None, bool]:
        """(the sequence number the shard was appended to, None before any; whether it has ended)."""
        with provider_errors("history.GetItem"):
            item = self._db.get_item(
                TableName=self._table, Key={"pk": {"S": position_pk(shard_id)}}, ConsistentRead=True
            ).get("Item")
        if item is None:
            return None, False
        return item.get("after", {}).get("S"), bool(item.get("ended", {}).get("BOOL", False))

    def frontiers(self, client_ids: Iterable[str]) -> dict[str, Frontier]:
        """Each client's frontier as committed (an empty one for a client with no tree yet)."""
        wanted = sorted(set(client_ids))
        found = {client_id: Frontier() for client_id in wanted}
        keys = [{"pk": {"S": head_pk(client_id)}} for client_id in wanted]
        items, unread = read_keys(
            self._db, self._table, keys, "history.BatchGetItem", provider_errors, consistent=True
        )
        if unread:
            raise internal_error("history.BatchGetItem")
        for item in items:
            client_id = item["pk"]["S"].rsplit("#", 1)[0]
            found[client_id] = _frontier(int(item["size"]["N"]), bytes(item["frontier"]["B"]))
        return found

    def commit(
        self, shard_id: str, expected: str | None, after: str, appends: Sequence[Append], *, ended: bool
    ) -> None:
        """The appends, and the shard's position moved from ``expected`` to ``after``, all or nothing."""
        if len(appends) > MAX_APPENDS:
            raise ValueError(f"at most {MAX_APPENDS} clients' appends commit together, not {len(appends)}")
        actions: list[dict[str, Any]] = []
        for append in appends:
            actions.append({"Put": self._leaves_put(append)})
            actions.append({"Put": self._head_put(append)})
        actions.append({"Put": self._position_put(shard_id, expected, after, ended)})
        try:
            self._db.transact_write_items(TransactItems=actions)
        except ClientError as error:
            reasons = error.response.get("CancellationReasons", [])
            if any(reason.get("Code") == "ConditionalCheckFailed" for reason in reasons):
                raise HistoryContended() from error
            raise internal_error("history.TransactWriteItems", error) from error
        except BotoCoreError as error:
            raise internal_error("history.TransactWriteItems", error) from error

    def _leaves_put(self, append: Append) -> dict[str, Any]:
        return {
            "TableName": self._table,
            "Item": {
                "pk": {"S": leaves_pk(append.client_id, append.first)},
                "first": {"N": str(append.first)},
                "ids": {"S": "\n".join(append.record_ids)},
                "leaves": {"B": b"".join(append.leaves)},
            },
            "ConditionExpression": "attribute_not_exists(pk)",
        }

    def _head_put(self, append: Append) -> dict[str, Any]:
        put: dict[str, Any] = {
            "TableName": self._table,
            "Item": {
                "pk": {"S": head_pk(append.client_id)},
                "size": {"N": str(append.after.size)},
                "frontier": {"B": b"".join(append.after.hashes)},
                "updatedAt": {"S": self._clock.now().isoformat()},
            },
        }
        if append.before.size == 0:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "#size = :size"
            put["ExpressionAttributeNames"] = {"#size": "size"}
            put["ExpressionAttributeValues"] = {":size": {"N": str(append.before.size)}}
        return put

    def _position_put(self, shard_id: str, expected: str | None, after: str, ended: bool) -> dict[str, Any]:
        kept = int((self._clock.now() + POSITION_KEPT).timestamp())
        put: dict[str, Any] = {
            "TableName": self._table,
            "Item": {
                "pk": {"S": position_pk(shard_id)},
                "after": {"S": after},
                "ended": {"BOOL": ended},
                "ttl": {"N": str(kept)},
            },
        }
        if expected is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "#after = :after"
            put["ExpressionAttributeNames"] = {"#after": "after"}
            put["ExpressionAttributeValues"] = {":after": {"S": expected}}
        return put

    def leaves(self, client_id: str, count: int) -> list[tuple[str, bytes]]:
        """(record id, leaf hash) of the client's first ``count`` leaves, in order: each append's item
        starts where the one before it ended."""
        found: list[tuple[str, bytes]] = []
        while len(found) < count:
            with provider_errors("history.GetItem"):
                item = self._db.get_item(
                    TableName=self._table,
                    Key={"pk": {"S": leaves_pk(client_id, len(found))}},
                    ConsistentRead=True,
                ).get("Item")
            if item is None:
                raise internal_error("history.GetItem")
            ids = item["ids"]["S"].split("\n")
            hashes = bytes(item["leaves"]["B"])
            found.extend((ids[n], hashes[n * HASH_SIZE : (n + 1) * HASH_SIZE]) for n in range(len(ids)))
        return found[:count]


def _frontier(size: int, packed: bytes) -> Frontier:
    return Frontier(size, [packed[n : n + HASH_SIZE] for n in range(0, len(packed), HASH_SIZE)])
