"""The layer ``sam build`` makes holds what Lambda needs and nothing else.

Not the local stack (``phoneid_dev``), not the operator's CLI (``phoneid_cli``, which reaches it), no
development or test dependency (moto, asyncssh, uvicorn, starlette, httpx, pytest, schemathesis and
what they bring); and no shipped module imports one, even inside a function, where only its first
call on Lambda would find it missing. What importing each handler loads from this layer:
``test_handler_imports.py``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.lambda_runtime import (
    LAYER_SOURCE,
    LOCAL_ONLY_MODULES,
    LOCAL_ONLY_PATHS,
    RUNTIME_DISTRIBUTIONS,
    built_layer,
    development_distributions,
    development_modules,
    installed_top_level,
    layer_distributions,
    module_name,
    shipped_sources,
)
from tools.licences import ROOT, layer_without_texts


@pytest.fixture(scope="module")
def layer() -> Path:
    return built_layer()


def test_the_layer_ships_neither_the_local_stack_nor_the_cli(layer: Path) -> None:
    assert [path for path in LOCAL_ONLY_PATHS if (layer / path).exists()] == []
    assert sorted(path.name for path in layer.glob("phoneid_cli*")) == []


def test_the_layers_phoneid_is_the_source_package_without_its_local_only_parts(layer: Path) -> None:
    shipped = sorted(
        path.relative_to(layer).as_posix() for path in (layer / "phoneid").rglob("*") if path.is_file()
    )
    assert shipped == shipped_sources()


def test_the_layer_ships_no_development_or_test_distribution(layer: Path) -> None:
    # Neither as an installed distribution nor as a package copied in without its metadata
    distributions = set(layer_distributions(layer))
    top_level = {module_name(path.name) for path in layer.iterdir()}

    assert sorted(distributions & development_distributions()) == []
    assert sorted(top_level & development_modules()) == []


def test_the_layer_carries_each_distributions_licence_text_and_phoneids(layer: Path) -> None:
    # Each distribution's licence files stay in its dist-info, as pip installs them (what pip-licenses
    # finds there: LICENSE, COPYING…), and PhoneID's own LICENSE ships beside them
    assert layer_without_texts(layer) == []
    assert (layer / "PHONEID-LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


def _imports(path: Path, layer: Path) -> set[str]:
    """What a module imports, wherever in it (functions too), but what only a type checker reads."""
    tree = ast.parse(path.read_text(), str(path))
    package = path.relative_to(layer).with_suffix("").parts[:-1]
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*base, *([node.module] if node.module else [])])
            found |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return found


def _local_only(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in LOCAL_ONLY_MODULES)


def test_nothing_in_phoneid_imports_the_operators_cli() -> None:
    # The CLI imports the service's package, never the other way round (the local stack included)
    importing = sorted(
        path.relative_to(LAYER_SOURCE).as_posix()
        for path in (LAYER_SOURCE / "phoneid").rglob("*.py")
        if any(m == "phoneid_cli" or m.startswith("phoneid_cli.") for m in _imports(path, LAYER_SOURCE))
    )

    assert importing == []


def test_no_module_the_layer_ships_imports_what_lambda_does_not_have(layer: Path) -> None:
    # Given what a function can import on Lambda: the standard library, the layer, the runtime's boto3
    available = (
        set(sys.stdlib_module_names)
        | {module_name(path.name) for path in layer.iterdir()}
        | {module_name(name) for d in RUNTIME_DISTRIBUTIONS for name in installed_top_level(d)}
    )

    # When every import of every shipped module is read
    wanting = {}
    for path in sorted((layer / "phoneid").rglob("*.py")):
        imported = _imports(path, layer)
        wanted = {m for m in imported if _local_only(m) or m.split(".")[0] not in available}
        if wanted:
            wanting[path.relative_to(layer).as_posix()] = sorted(wanted)

    # Then none names the local-only code or a module Lambda would not find
    assert wanting == {}
