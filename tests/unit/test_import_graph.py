"""The package's modules import each other at module level with no circle, ``phoneid.dev`` included.

Read from the source with ``ast``: an edge is a module-level import of another ``phoneid`` module
(an import under ``if TYPE_CHECKING:`` names a type only and is left out). A circle would only
import at all with one of its imports moved into a function, so ``phoneid.dev`` keeps function-local
imports only for what is deliberately imported late, each listed here with why.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "core"
PACKAGE = LAYER / "phoneid"

# What phoneid.dev imports inside functions, by the imported module's prefix, and why.
LATE_IMPORTS = {
    "moto": "takes seconds to import; only once a stack starts (the CLI imports phoneid.dev without moto)",
    "httpx": "imports its command line (click, rich, pygments) with itself; only once the demo calls the API",
    "uvicorn": "only when `phoneid dev` serves; the CLI imports phoneid.dev.server to read the state file",
    "samtranslator": "only when a role's SAM policy templates are expanded",
    "aws_lambda_powertools.event_handler.openapi": "only to generate the OpenAPI document",
    # The modules that register patches import phoneid.dev.patches: the registry imports them when applied.
    "phoneid.dev.emulation": "imported by phoneid.dev.patches.apply_all, the registry of its patches",
    "phoneid.dev.workflows": "imported by phoneid.dev.patches.apply_all, the registry of its patches",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(LAYER).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    """The names an import statement reaches: each module, and each name imported from one."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])])
    yield base
    yield from (f"{base}.{alias.name}" for alias in node.names)


def _ours(name: str) -> str | None:
    """The phoneid module ``name`` is, or is in (``phoneid.dev.template.Template``: its module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(module: str) -> tuple[set[str], list[tuple[int, str]]]:
    """(the phoneid modules ``module`` imports at module level, its function-local imports)."""
    path = MODULES[module]
    at_top: set[str] = set()
    late: list[tuple[int, str]] = []

    def walk(body: list[ast.stmt], top_level: bool) -> None:
        for node in body:
            if _is_type_checking(node):
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                reached = {_ours(name) for name in _imported(node, module, path.name == "__init__.py")}
                if top_level:
                    at_top.update(found for found in reached if found and found != module)
                else:
                    names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
                    late.append((node.lineno, names[0] if names else (node.module or "")))
            inner = top_level and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    walk(children, inner)

    walk(ast.parse(path.read_text()).body, True)
    return at_top, late


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_module_of_phoneid_or_its_local_stack_imports_itself_in_a_circle() -> None:
    graph = {module: _imports(module)[0] for module in MODULES}

    assert _circles(graph) == []


def test_the_local_stack_has_no_circle_even_through_its_imports_inside_functions() -> None:
    """Once broken only by moving an import into a function: demo, pages and server; processes,
    triggers, stack and workflows. The patches registry alone imports back, when it is applied."""
    registry = {prefix for prefix in LATE_IMPORTS if prefix.startswith("phoneid.")}
    graph = {}
    for module in MODULES:
        if module.startswith("phoneid.dev"):
            at_top, late = _imports(module)
            inside = {_ours(name) for _, name in late if name not in registry}
            graph[module] = {found for found in at_top | inside if found and found.startswith("phoneid.dev")}

    assert _circles(graph) == []


def test_the_circle_finder_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

    assert _circles(graph) == [["a", "b", "c"]]


def test_the_local_stack_imports_late_only_what_is_deliberately_late() -> None:
    unexplained = [
        f"{module}:{line} imports {name} inside a function"
        for module in sorted(MODULES)
        if module.startswith("phoneid.dev")
        for line, name in _imports(module)[1]
        if not any(name == prefix or name.startswith(f"{prefix}.") for prefix in LATE_IMPORTS)
    ]

    assert unexplained == []


def test_the_local_stacks_rooms_import_its_pages_and_demo_only_from_the_app() -> None:
    """demo and pages once imported the server, which imported them: now only the app assembles them."""
    importers = {
        module for module in MODULES if {"phoneid.dev.demo", "phoneid.dev.pages"} & _imports(module)[0]
    }

    assert importers == {"phoneid.dev.app"}
