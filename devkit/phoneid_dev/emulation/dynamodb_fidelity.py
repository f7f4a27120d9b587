"""Fidelity fixes to moto's DynamoDB. DynamoDB applies each single-item write atomically, condition
included; moto evaluates the condition and writes in Python without a lock, so under threads two
conditional writes could in principle both pass, and a read could see an item half written. The
local stack serialises those writes, and the reads with them, as DynamoDB would. And a transaction
costs DynamoDB the same whatever the table's size; moto backs up every table it touches (a deep copy
of all its items) to roll back a cancelled one, so a workflow that enrolls row after row slowed
quadratically (800 rows in, a transaction took 50 ms; 4,000 rows in, 200 ms). Here a transaction
saves and restores only the items it touches. And moto parses a condition expression anew for every
item it checks (twice for a transaction's put or an update: once to list the names and values it
uses; what that costs: docs/performance.md#measured-in-the-emulation); here a parsed expression is
kept for the next item with the same expression, names and values (the parsed form is not changed by
evaluating it).
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable
from typing import Any

from phoneid_dev.patches import Patch, apply, named, register

# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the patch registry imports this module before (or without) starting moto.

_READ_ACTIONS = ("get_item", "batch_get_item", "query", "scan", "transact_get_items")
# One item operation at a time, writes and the reads that copy items out (see atomic_dynamodb_writes).
_item_lock = threading.RLock()


class _TableKeepingCopy:
    """``copy`` as moto's DynamoDB backend sees it: its transaction backup of a whole table is the
    table itself (``_undone_per_item`` saves and restores the touched items instead)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        from moto.dynamodb.models.table import Table

        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


def _touched(backend: Any, transact_items: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """(table, key, the item's attributes or None) of each well-formed item a transaction names."""
    saved = []
    for entry in transact_items:
        for kind, operation in entry.items():
            table = backend.tables.get(operation.get("TableName")) if isinstance(operation, dict) else None
            if table is None:
                continue
            key = operation.get("Item", {}) if kind == "Put" else operation.get("Key", {})
            names = [n for n in (table.hash_key_attr, table.range_key_attr) if n]
            if not all(n in key for n in names):
                continue  # moto refuses the transaction before it writes anything
            key = {n: key[n] for n in names}
            current = backend.get_item(table.name, key)
            saved.append((table.name, key, current.to_json()["Attributes"] if current else None))
    return saved


def _undone_per_item(transact: Callable[..., Any]) -> Callable[..., Any]:
    """A transaction that fails puts back, in reverse order, each item it touched as it was."""

    @functools.wraps(transact)
    def wrapper(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
        saved = _touched(backend, transact_items)
        try:
            return transact(backend, transact_items)
        except Exception:
            for table_name, key, attributes in reversed(saved):
                if attributes is None:
                    backend.delete_item(table_name, key)
                else:
                    backend.put_item(table_name, attributes)
            raise

    return wrapper


class _KeptConditionParse:
    """moto's ``ConditionExpressionParser``, whose ``parse`` answers from the last few thousand
    expressions parsed: the same tree, and the same names and values found. An expression is known
    by its text and by its names and values written out (``repr`` tells apart every value a request
    can carry, bytes from text included); a parse that fails is not kept, so it fails again."""

    def __init__(self, expression: str | None, names: Any, values: Any) -> None:
        self.condition_expression = expression
        self.expression_attribute_names = names
        self.expression_attribute_values = values
        self.expr_attr_names_found: list[str] = []
        self.expr_attr_values_found: list[str] = []

    def parse(self) -> Any:
        expression, names, values = (
            self.condition_expression,
            self.expression_attribute_names,
            self.expression_attribute_values,
        )
        key = (expression, repr(names), repr(values))
        kept = _conditions_parsed.get(key)
        if kept is None:
            from moto.dynamodb.comparisons import ConditionExpressionParser

            # Parsed from copies: the kept tree shares nothing with this request's body.
            parser = ConditionExpressionParser(expression, copy.deepcopy(names), copy.deepcopy(values))
            tree = parser.parse()
            if len(_conditions_parsed) >= 4096:  # a few dozen in use; any number is bounded
                _conditions_parsed.clear()
            kept = _conditions_parsed[key] = (
                tree,
                tuple(parser.expr_attr_names_found),
                tuple(parser.expr_attr_values_found),
            )
        tree, names_found, values_found = kept
        self.expr_attr_names_found = list(names_found)
        self.expr_attr_values_found = list(values_found)
        return tree


_conditions_parsed: dict[tuple[str | None, str, str], tuple[Any, tuple[str, ...], tuple[str, ...]]] = {}


def _serialised(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _item_lock:
            return method(*args, **kwargs)

    return wrapper


_ATOMIC_WRITES = register(
    *(
        Patch(
            why="one condition parse kept per expression, names and values (get_filter_expression's too)",
            module=module,
            attribute="create_condition_expression_parser",
            replace=lambda _: _KeptConditionParse,
            expected=named("create_condition_expression_parser"),
        )
        for module in ("moto.dynamodb.comparisons", "moto.dynamodb.models", "moto.dynamodb.responses")
    ),
    Patch(
        why="a transaction backs up only the items it touches, not every table",
        module="moto.dynamodb.models",
        attribute="copy",
        replace=lambda _: _TableKeepingCopy(),
        expected=lambda original: original is copy,
    ),
    Patch(
        why="a transaction is atomic under threads, and undone item by item",
        module="moto.dynamodb.models",
        attribute="DynamoDBBackend.transact_write_items",
        replace=lambda original: _serialised(_undone_per_item(original)),
        expected=named("transact_write_items"),
    ),
    *(
        Patch(
            why="a single-item write is atomic under threads, its condition included",
            module="moto.dynamodb.models",
            attribute=f"DynamoDBBackend.{name}",
            replace=_serialised,
            expected=named(name),
        )
        for name in ("put_item", "update_item", "delete_item")
    ),
    # A read's answer is built from the stored item itself (its nested maps and lists), which a write
    # changes in place: a read overlapping a write could see half of it, or fail ("dictionary changed
    # size during iteration"). DynamoDB reads an item as one write left it; so does this.
    *(
        Patch(
            why="a read sees an item as one write left it",
            module="moto.dynamodb.responses",
            attribute=f"DynamoHandler.{name}",
            replace=_serialised,
            expected=named(name),
        )
        for name in _READ_ACTIONS
    ),
)


def atomic_dynamodb_writes() -> None:
    """DynamoDB's single-item and transaction atomicity, under threads."""
    apply(*_ATOMIC_WRITES)
