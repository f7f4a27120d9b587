"""DecisionStream: ``DecisionsTable``'s stream (new and old images), read with the DynamoDB Streams
API, shard by shard (docs/adr/0120-a-decision-history-verified-offline.md).

Only records become leaves: an item with a ``leaf`` inserted, or written again with another leaf (a
batch retried). Tallies, markers, history items and deletions (erasure, TTL) are read past.
"""

from __future__ import annotations

from typing import Any

from phoneid.adapters.aws import provider_errors
from phoneid.domain.history import StreamedLeaf, StreamPage


class DynamoDecisionStream:
    def __init__(self, streams: Any, stream_arn: str) -> None:
        self._streams = streams
        self._arn = stream_arn
        # A shard is named with its stream's label (the stream's creation time, the end of its ARN):
        # a stream made again (turned off and on) starts its shards and sequence numbers anew.
        self._label = stream_arn.rsplit("/stream/", 1)[-1]

    def shards(self) -> list[str]:
        """Every shard the stream still holds, parents before their children (as listed), each as
        ``{stream label}/{shard id}``."""
        found: list[str] = []
        asked: dict[str, Any] = {"StreamArn": self._arn}
        while True:
            with provider_errors("decision stream.DescribeStream"):
                description = self._streams.describe_stream(**asked)["StreamDescription"]
            found.extend(f"{self._label}/{shard['ShardId']}" for shard in description.get("Shards", []))
            last = description.get("LastEvaluatedShardId")
            if not last:
                return found
            asked["ExclusiveStartShardId"] = last

    def read(self, shard: str, after: str | None, limit: int) -> StreamPage:
        """Up to ``limit`` stream records of the shard after the sequence number ``after`` (from its
        start when None)."""
        shard_id = shard.rsplit("/", 1)[-1]
        position: dict[str, Any] = (
            {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after}
            if after
            else {"ShardIteratorType": "TRIM_HORIZON"}
        )
        with provider_errors("decision stream.GetShardIterator"):
            iterator = self._streams.get_shard_iterator(StreamArn=self._arn, ShardId=shard_id, **position)
        with provider_errors("decision stream.GetRecords"):
            answer = self._streams.get_records(ShardIterator=iterator["ShardIterator"], Limit=limit)
        records = answer.get("Records", [])
        leaves = tuple(leaf for leaf in map(_leaf, records) if leaf is not None)
        last = str(records[-1]["dynamodb"]["SequenceNumber"]) if records else after
        # No next iterator: the shard is closed and this read reached its end.
        return StreamPage(leaves, last, ended=not answer.get("NextShardIterator"))


def _leaf(record: dict[str, Any]) -> StreamedLeaf | None:
    if record.get("eventName") not in ("INSERT", "MODIFY"):
        return None
    change = record.get("dynamodb", {})
    leaf = change.get("NewImage", {}).get("leaf", {}).get("B")
    if not leaf:
        return None
    if change.get("OldImage", {}).get("leaf", {}).get("B") == leaf:
        return None  # written again as it was: the same leaf, already in the tree
    client_id, record_id = str(change["NewImage"]["pk"]["S"]).split("#", 1)
    return StreamedLeaf(client_id, record_id, bytes(leaf), str(change["SequenceNumber"]))
