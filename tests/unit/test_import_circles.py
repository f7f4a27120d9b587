"""No module of what the layer ships imports one that imports it back, directly or through others.

An import is counted wherever it is (a function's too: an import put there only to break a circle
still closes it), except what only a type checker reads. Importing ``a.b.c`` imports the packages
``a`` and ``a.b`` first, so a package whose ``__init__`` imports a module that imports the package's
own ``items`` is a circle. Read from the source, so no layer build is needed
(docs/adr/0089-no-import-circles-in-the-layer.md).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Set
from pathlib import Path

from tests.lambda_runtime import LAYER_SOURCE, shipped_sources


def module_of(relative: str) -> str:
    parts = Path(relative).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, module: str) -> set[str]:
    """Every name a module imports, wherever in it, but under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(), str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            name = ".".join([*base, *([node.module] if node.module else [])])
            found |= {name} | {f"{name}.{alias.name}" for alias in node.names}
    return found


def import_graph() -> dict[str, set[str]]:
    """Each shipped module and the shipped modules importing it loads (with their packages)."""
    sources = {module_of(relative): LAYER_SOURCE / relative for relative in shipped_sources()}
    sources = {module: path for module, path in sources.items() if path.suffix == ".py"}
    graph: dict[str, set[str]] = {}
    for module, path in sources.items():
        loaded = set()
        for name in imported(path, module):
            parts = name.split(".")
            loaded |= {".".join(parts[:end]) for end in range(1, len(parts) + 1)}
        graph[module] = {other for other in loaded & sources.keys() if other != module}
    return graph


def circles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in graph[module]:
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while (member := stack.pop()) != module:
                group.append(member)
            if group:
                found.append(sorted([module, *group]))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return found


def test_no_shipped_module_imports_itself_back_through_others() -> None:
    # Given every import of every module the layer ships
    graph = import_graph()

    # Then no group of them imports one another round
    assert graph["phoneid.wiring.container"]  # the reader found imports at all
    assert circles(graph) == []


def test_a_package_that_imports_a_module_importing_the_package_is_a_circle() -> None:
    # Given a package whose __init__ imports its store, which imports the package's items
    graph = {"rooms": {"rooms.store"}, "rooms.store": {"rooms", "rooms.items"}, "rooms.items": {"rooms"}}

    # Then the three are one circle
    assert circles(graph) == [["rooms", "rooms.items", "rooms.store"]]
