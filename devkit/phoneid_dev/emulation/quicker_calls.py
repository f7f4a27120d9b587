"""moto's per-call overheads cut (``quicker_moto_calls``): the same answers in less time, each
shortcut saying why the answer cannot change.
"""

from __future__ import annotations

import copy
import functools
import inspect
import pickle
from collections.abc import Callable
from typing import Any

from phoneid_dev.patches import Patch, apply, named, register

# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the patch registry imports this module before (or without) starting moto.


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
