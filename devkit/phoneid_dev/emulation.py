"""moto as the local AWS: in-process (tests), and for ``phoneid dev`` both in-process (its own
handlers) and as a server other processes reach.

Fidelity fixes to moto's DynamoDB. DynamoDB applies each single-item write atomically, condition
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

moto's per-call overheads are also cut (``quicker_moto_calls``): the same answers in less time, each
shortcut saying why the answer cannot change. Every replacement of a moto name is a registered
``phoneid_dev.patches.Patch``; nothing here patches botocore, boto3 or Powertools.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import os
import pickle
import socket
import threading
from collections.abc import Callable
from typing import Any

from phoneid_dev.patches import Patch, apply, apply_all, named, register

# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the CLI and the tests import this module before (or without) starting moto.

_READ_ACTIONS = ("get_item", "batch_get_item", "query", "scan", "transact_get_items")
# One item operation at a time, writes and the reads that copy items out (see atomic_dynamodb_writes).
_item_lock = threading.RLock()

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


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


def _listed_once(list_of_moto_modules: Callable[[], Any]) -> Callable[[], tuple[str, ...]]:
    """moto's server lists its own package directory on every request, to route it, under one lock
    for all threads: half the server's time when a batch's rows make their calls. The list is the
    installed package's and cannot change while the process runs, so it is read once."""
    modules = tuple(list_of_moto_modules())
    return lambda: modules


def _names_remembered(picked_by_moto: Callable[..., Any]) -> Callable[..., Any]:
    """moto's response serializer looks up each member of a result under every alias of its name,
    asking six alias providers built anew for each member: for DynamoDB, whose results are plain
    dicts of attribute values with ten members each, a fifth of a call's time. For a plain dict the
    names tried depend only on the member's name and shape (a dict has no ``Meta`` and always the
    same class name), so they are worked out once per member and shape; the first name the dict
    holds still wins, as before. Other values, and serializers with transformers, go moto's way."""
    from moto.core import serialize
    from moto.core.constants import MISSING
    from moto.core.utils import get_value

    names_by_member: dict[tuple[str, Any, Any], tuple[str, ...]] = {}

    @functools.wraps(picked_by_moto)
    def picked(self: Any, value: Any, key: str, shape: Any) -> Any:
        picker = self._value_picker
        if (
            type(value) is not dict
            or type(picker) is not serialize.XFormedAttributePicker
            or picker.response_transformers
            or picker.alias_providers is not serialize.DEFAULT_ALIAS_PROVIDERS
        ):
            return picked_by_moto(self, value, key, shape)
        member = (key, shape, getattr(shape, "parent", None))
        names = names_by_member.get(member)
        if names is None:
            if len(names_by_member) > 100_000:  # shapes are the service models' own: never reached
                names_by_member.clear()
            context = serialize.AttributePickerContext(obj=value, key=key, shape=shape)
            names = names_by_member[member] = tuple(picker.get_possible_keys(context))
        for name in names:
            # moto's get_value of a plain dict and a name with no dot (no path) is a lookup that
            # answers MISSING for a name not there; here without raising and catching a KeyError.
            found = get_value(value, name, MISSING) if "." in name else value.get(name, MISSING)
            if found is not MISSING:
                return found
        return None

    return picked


class _FunctionNames:
    """``name in`` a class's functions, as ``inspect.getmembers(cls, inspect.isfunction)`` lists them."""

    def __init__(self, owner: type) -> None:
        self._owner = owner

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and inspect.isfunction(getattr(self._owner, name, None))


class _ParsedOnce:
    """moto parses an update expression twice per ``UpdateItem`` (to check the names it uses, then to
    apply it), and its validator deep-copies the parsed tree before evaluating the copy. The tree is
    only ever read, or copied first, so one parse per expression text is kept for the next call with
    the same text (a text that fails to parse fails every time, as before); and the validator's copy
    of a kept tree is made from the tree's pickle, taken once: the same objects as a deep copy (the
    tree's nodes have no copy hooks of their own), in less time
    (docs/performance.md#measured-in-the-emulation)."""

    def __init__(self) -> None:
        self._trees: dict[str, Any] = {}
        self._pickled: dict[int, tuple[Any, bytes]] = {}

    def parser(self, parse: Callable[[str], Any]) -> Any:
        def parsed(expression: str) -> Any:
            tree = self._trees.get(expression)
            if tree is None:
                if len(self._trees) >= 4096:  # a few dozen texts in use; any number is bounded
                    self._trees.clear()
                    self._pickled.clear()
                tree = parse(expression)
                self._pickled[id(tree)] = (tree, pickle.dumps(tree, pickle.HIGHEST_PROTOCOL))
                self._trees[expression] = tree
            return tree

        return staticmethod(parsed)

    def copier(self, deepcopy: Callable[..., Any]) -> Callable[..., Any]:
        def copied(value: Any, memo: dict[int, Any] | None = None) -> Any:
            kept = self._pickled.get(id(value))
            if kept is not None and kept[0] is value and memo is None:
                return pickle.loads(kept[1])  # noqa: S301 - bytes this process pickled itself
            return deepcopy(value, memo)

        return copied


_parsed_once = _ParsedOnce()


def _walks_planned_once(_: Any) -> Callable[..., Any]:
    """moto's validator walks an update expression's tree once per check, ten checks per
    ``UpdateItem``, and at every node of every walk rebuilds the check's map of node types to
    handlers, twice for a node it handles. The map is the same throughout a walk (each check's
    ``_processing_map`` lists fixed types and its own methods), so each walk builds it once; the
    nodes are visited, handled and replaced in the same order as before."""
    from moto.dynamodb.parsing.ast_nodes import Node  # type: ignore[attr-defined]

    # Whether a class of objects met in a tree is a node (``Node`` is an abstract class, whose
    # ``isinstance`` is a Python call): classes are not registered with it, so a class's answer
    # cannot change.
    is_node: dict[type, bool] = {}

    def traverse(self: Any, root: Any) -> Any:
        handlers = tuple(self._processing_map().items())
        kinds = self.nodes_to_be_processed()
        before_child = self.pre_processing_of_child

        def walk(node: Any, child_id: int) -> Any:
            kind_of_node = type(node)
            node_class = is_node.get(kind_of_node)
            if node_class is None:
                node_class = is_node[kind_of_node] = isinstance(node, Node)
            if node_class:
                parent = node.parent
                if node.children is not None:
                    for i, child in enumerate(node.children):
                        before_child(node, i)
                        walk(child, i)
                if isinstance(node, kinds):
                    for kind, handle in handlers:  # the first that matches, as moto's ``process``
                        if isinstance(node, kind):
                            node = handle(node)
                            break
                    node.parent = parent
                    if parent:
                        parent.children[child_id] = node
            return node

        return walk(root, -1)

    return traverse


_QUICKER_CALLS = register(
    Patch(
        why="the server routes by a list of moto's modules read once, not at every request",
        module="moto.backends",
        attribute="list_of_moto_modules",
        replace=_listed_once,
        expected=named("list_of_moto_modules"),
    ),
    Patch(
        why="a plain dict's member names worked out once per member and shape",
        module="moto.core.serialize",
        attribute="ResponseSerializer.get_value",
        replace=_names_remembered,
        expected=named("get_value"),
    ),
    Patch(
        why="an action looked up on its class, not by listing every function of it",
        module="moto.core.responses",
        attribute="method_names_from_class",
        replace=lambda _: _FunctionNames,
        expected=named("method_names_from_class"),
    ),
    Patch(
        why="one parse kept per update expression text",
        module="moto.dynamodb.parsing.expressions",
        attribute="UpdateExpressionParser.make",
        replace=_parsed_once.parser,
        expected=named("make"),
    ),
    Patch(
        why="a kept update expression tree copied from its pickle",
        module="moto.dynamodb.parsing.validators",
        attribute="deepcopy",
        replace=_parsed_once.copier,
        expected=lambda original: original is copy.deepcopy,
    ),
    Patch(
        why="an update expression walk builds its map of handlers once",
        module="moto.dynamodb.parsing.ast_nodes",
        attribute="DepthFirstTraverser.traverse",
        replace=_walks_planned_once,
        expected=named("traverse"),
    ),
)


def quicker_moto_calls() -> None:
    """The per-call overheads of moto cut, results unchanged (each patch's function says how)."""
    apply(*_QUICKER_CALLS)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class MotoServer:
    """moto's threaded server on loopback for other processes (by endpoint URL), and moto's
    in-process mock over the same backends for this one."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> MotoServer:
        # moto takes seconds to import: only once a stack starts (the CLI imports this module too).
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per AWS call is noise here
        apply_all()
        for name, value in FAKE_CREDENTIALS.items():
            os.environ.setdefault(name, value)
        # moto's own internal calls (e.g. Step Functions invoking services) go to MOTO_PORT.
        os.environ["MOTO_PORT"] = str(self.port)
        # This process (handlers, workflow tasks, SFTP) calls the same backends in-process, as the
        # tests do; HTTP, which moto's server answers on a new connection and thread per call, is
        # for other processes (the CLI, benches, the SDKs' tools).
        from moto import mock_aws

        os.environ.pop("AWS_ENDPOINT_URL", None)  # one inherited from another stack would win
        self._mock = mock_aws()
        self._mock.start()
        self._server = ThreadedMotoServer(ip_address=self.host, port=self.port, verbose=False)
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
        self._mock.stop()
