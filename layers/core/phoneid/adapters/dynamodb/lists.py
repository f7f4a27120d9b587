"""The operator's signal lists in one table: one item per entry under ``{kind}#{key}``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from phoneid.adapters.dynamodb.batch_io import from_dynamo, get_all, put_all, to_dynamo
from phoneid.adapters.dynamodb.items import plain, to_item
from phoneid.domain.signals import ListEntry, ListKind


def _pk(kind: ListKind, key: str) -> str:
    return f"{kind.value}#{key}"


class DynamoSignalLists:
    """Entries keyed by kind and normalised key (``phoneid.domain.lists``); an SSN's key is its MAC.

    Lookups fail as ``SignalSourceError`` (the policy decides what that means); imports as an 8000.
    """

    def __init__(self, dynamodb: Any, table: str) -> None:
        self._db = dynamodb
        self._table = table

    def lookup(self, kind: ListKind, keys: Sequence[str]) -> dict[str, ListEntry]:
        """The entries of ``kind`` under any of ``keys``, by key; keys without an entry are absent."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        items = get_all(
            self._db, self._table, ({"pk": {"S": _pk(kind, key)}} for key in wanted), "signal list lookup"
        )
        entries = (self._entry(plain(item)) for item in items)
        return {entry.key: entry for entry in entries}

    def put_many(self, entries: Iterable[ListEntry]) -> int:
        """Every entry written (one under the same kind and key is replaced); the number written."""
        return put_all(self._db, self._table, (self._item(entry) for entry in entries), "signal list import")

    @staticmethod
    def _item(entry: ListEntry) -> dict[str, Any]:
        return to_item(
            {
                "pk": _pk(entry.kind, entry.key),
                "kind": entry.kind.value,
                "key": entry.key,
                "values": to_dynamo(dict(entry.values)),
            }
        )

    @staticmethod
    def _entry(values: Mapping[str, Any]) -> ListEntry:
        return ListEntry(
            kind=ListKind(values["kind"]),
            key=str(values["key"]),
            values=from_dynamo(values.get("values") or {}),
        )
