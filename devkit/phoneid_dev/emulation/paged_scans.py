"""A paged scan of moto's DynamoDB continued from its start key (``paged_scans``).

moto answers every page of a scan by sorting the whole table, hashing every item's key to find its
segment and walking from the first item to the page's ``ExclusiveStartKey``: each page costs the
table's size, so a scan of N items in pages of P costs N²/P (the change monitor's pass over 200,000
identities in pages of 100: hours). DynamoDB's page costs its own size. Here a table keeps its keys
in moto's scan order, with each key's segment hash, built once and kept until a key is added or
removed (moto's ``Table.put_item`` of a new key, ``Table.delete_item``: every write path of moto's
backend, batches and transactions included, goes through these two, and an update changes no key).
A page then starts by bisecting to its start key, and moto's own loop runs over the items from
there: limits, filters, projections, copies and the last evaluated key are moto's, so the answer is
the same (``tests/unit/test_paged_scans.py`` compares the two). Scans of an index, and start keys
without the table's key attributes, go moto's way.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from phoneid_dev.patches import Patch, apply, named, register

# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the patch registry imports this module before (or without) starting moto.

_Key = tuple[Any, Any]  # (hash key, range key or None) as moto's DynamoType values


@dataclass
class _Keys:
    """One table's keys in moto's scan order, as of ``version`` (key additions and removals)."""

    version: int = 0
    built: int = -1
    items: Any = None  # the table's ``items`` the order was read from
    order: list[_Key] = field(default_factory=list)
    hashes: list[int] = field(default_factory=list)  # moto's segment hash of each key (0..255)
    segments: dict[tuple[int, int], list[_Key]] = field(default_factory=dict)


_tables: weakref.WeakKeyDictionary[Any, _Keys] = weakref.WeakKeyDictionary()
_lock = threading.RLock()


def _segment_hash(hash_key: Any) -> int:
    # moto's Item.is_within_segment: the first byte of the md5 of the hash key's value.
    return hashlib.md5(hash_key.value.encode("utf8"), usedforsecurity=False).digest()[0]


def _keys_changed(table: Any) -> None:
    with _lock:
        keys = _tables.get(table)
        if keys is not None:
            keys.version += 1


def _ordered(table: Any, segments: tuple[Any, Any]) -> list[_Key]:
    """The keys of ``segments`` (all for (None, None)) in moto's scan order, built when stale."""
    with _lock:
        keys = _tables.setdefault(table, _Keys())
        if keys.built != keys.version or keys.items is not table.items:
            version = keys.version
            items = table.all_items()  # moto's order
            keys.order = [(item.hash_key, item.range_key) for item in items]
            keys.hashes = [_segment_hash(item.hash_key) for item in items]
            keys.segments = {}
            keys.items, keys.built = table.items, version
        if segments == (None, None):
            return keys.order
        found = keys.segments.get(segments)
        if found is None:
            segment, total = segments
            found = keys.segments[segments] = [
                key for key, hashed in zip(keys.order, keys.hashes, strict=True) if hashed % total == segment
            ]
        return found


def _item(table: Any, key: _Key) -> Any:
    hash_key, range_key = key
    stored = table.items.get(hash_key)
    return stored.get(range_key) if range_key is not None and stored is not None else stored


def _start(table: Any, exclusive_start_key: dict[str, Any]) -> _Key | None:
    """The start key as a key of the order, or None when it lacks the table's key attributes."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    if table.hash_key_attr not in exclusive_start_key:
        return None
    hash_key = DynamoType(exclusive_start_key[table.hash_key_attr])
    if table.range_key_attr is None:
        return hash_key, None
    if table.range_key_attr not in exclusive_start_key:
        return None
    return hash_key, DynamoType(exclusive_start_key[table.range_key_attr])


def _after(table: Any, ordered: list[_Key], exclusive_start_key: dict[str, Any] | None) -> Iterator[Any]:
    """The items moto's loop reaches after skipping those at or before the start key."""
    position = 0
    if exclusive_start_key is not None:
        start = _start(table, exclusive_start_key)
        assert start is not None
        position = bisect.bisect_left(ordered, start)
        hash_attrs, range_attrs = [table.hash_key_attr], [table.range_key_attr]
        # The start key itself, when stored, is skipped by moto's own comparison.
        while position < len(ordered) and table._item_comes_before_dct(
            _item(table, ordered[position]), exclusive_start_key, hash_attrs, range_attrs, True
        ):
            position += 1
    for index in range(position, len(ordered)):  # by index: a slice would copy the rest of the order
        item = _item(table, ordered[index])
        if item is not None:
            yield item


class _Continued:
    """The table as moto's scan loop sees it: its items those from the start key on."""

    def __init__(self, table: Any, items: Iterator[Any]) -> None:
        self._table = table
        self._items = items

    def all_items(self) -> Iterator[Any]:
        return self._items

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


def _continued_from_start_key(scan: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(scan)
    def wrapper(
        table: Any,
        filters: dict[str, Any],
        limit: int,
        exclusive_start_key: dict[str, Any] | None,
        filter_expression: Any = None,
        index_name: str | None = None,
        consistent_read: bool = False,
        projection_expression: Any = None,
        segments: tuple[Any, Any] = (None, None),
    ) -> Any:
        moto_way = (filters, limit, exclusive_start_key, filter_expression, index_name, consistent_read)
        if index_name or (exclusive_start_key is not None and _start(table, exclusive_start_key) is None):
            return scan(table, *moto_way, projection_expression, segments=segments)
        items = _after(table, _ordered(table, segments), exclusive_start_key)
        return scan(
            _Continued(table, items),
            filters,
            limit,
            None,
            filter_expression,
            index_name,
            consistent_read,
            projection_expression,
            segments=(None, None),
        )

    return wrapper


def _counting_new_keys(put_item: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(put_item)
    def wrapper(table: Any, item_attrs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if table not in _tables:  # never scanned: nothing kept to go stale
            return put_item(table, item_attrs, *args, **kwargs)
        before = _stored_count(table, item_attrs)
        stored = put_item(table, item_attrs, *args, **kwargs)
        if _stored_count(table, item_attrs) != before:
            _keys_changed(table)
        return stored

    return wrapper


def _stored_count(table: Any, item_attrs: dict[str, Any]) -> int:
    """How many items the table holds under the item's hash key (a range key's own dict)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    hash_value = item_attrs.get(table.hash_key_attr)
    stored = table.items.get(DynamoType(hash_value)) if hash_value is not None else None
    if stored is None:
        return 0
    return len(stored) if table.range_key_attr is not None else 1


def _counting_removed_keys(delete_item: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(delete_item)
    def wrapper(table: Any, *args: Any, **kwargs: Any) -> Any:
        removed = delete_item(table, *args, **kwargs)
        if removed is not None:
            _keys_changed(table)
        return removed

    return wrapper


_PAGED_SCANS = register(
    Patch(
        why="a scan's page continues from its start key, in O(page), with moto's answer",
        module="moto.dynamodb.models.table",
        attribute="Table.scan",
        replace=_continued_from_start_key,
        expected=named("scan"),
    ),
    Patch(
        why="a new key makes the kept scan order stale",
        module="moto.dynamodb.models.table",
        attribute="Table.put_item",
        replace=_counting_new_keys,
        expected=named("put_item"),
    ),
    Patch(
        why="a removed key makes the kept scan order stale",
        module="moto.dynamodb.models.table",
        attribute="Table.delete_item",
        replace=_counting_removed_keys,
        expected=named("delete_item"),
    ),
)


def paged_scans() -> None:
    """A scan's pages each cost their own size, not the table's."""
    apply(*_PAGED_SCANS)
