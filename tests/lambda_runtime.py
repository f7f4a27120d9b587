"""Lambda's Python runtime as a handler sees it, on this machine: what is importable, nothing more.

On Lambda a function imports from its code (``/var/task``), then the layer (``/opt/python``), then
the runtime's own boto3 and botocore (``/var/runtime``); there is no site-packages of ours. Here the
same order is built for an interpreter started with ``-I -S`` (no site-packages, no PYTHONPATH):
the function's directory, the layer ``sam build`` made (``make template``), and the virtualenv's
boto3, botocore and what only they need.

The layer is built for Lambda (cp313, aarch64): its compiled distributions (pydantic-core,
cryptography, cffi, PyYAML, wrapt) cannot load on this machine. Their virtualenv builds stand in for
them, placed before the layer, with what pins one of them exactly (pydantic pins pydantic-core): the
same import names, from the development environment's versions. Everything else comes from the
built layer itself, so a module the layer does not ship cannot be imported.
"""

from __future__ import annotations

import filecmp
import importlib.machinery
import importlib.metadata
import json
import sys
import tomllib
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tools.lock import LAYER_REQUIREMENTS, parse_export

ROOT = Path(__file__).resolve().parents[1]
LAYER_BUILD = ROOT / ".aws-sam" / "build" / "CoreLayer" / "python"
LAYER_SOURCE = ROOT / "layers" / "core"
FUNCTIONS = ROOT / "functions"

# What only a developer's machine runs: never in the layer, never imported by a handler.
# The local stack and the operator's CLI are packages of their own beside the service (devkit/).
LOCAL_ONLY_MODULES = ("phoneid_dev", "phoneid_cli")
LOCAL_ONLY_PATHS = ("phoneid_dev", "phoneid_cli", "phoneid/dev")

# Lambda's python3.13 runtime: boto3 and botocore, and what they need, are the runtime's.
RUNTIME_DISTRIBUTIONS = ("boto3", "botocore", "s3transfer", "jmespath", "python-dateutil", "six", "urllib3")


class LayerNotBuilt(Exception):
    """No built layer, or one older than the sources: ``make template`` builds it."""


def built_layer(build: Path = LAYER_BUILD, requirements: Path = LAYER_REQUIREMENTS) -> Path:
    """The layer ``sam build`` made, checked to ship today's ``phoneid`` (every file but the local-only)
    and exactly the distributions ``layers/core/requirements.txt`` pins, at their versions: a layer
    built before the lock moved would ship what the gate no longer runs."""
    if not (build / "phoneid").is_dir():
        raise LayerNotBuilt(f"no built layer at {build}: make template builds it")
    stale = [
        relative
        for relative in shipped_sources()
        if not (build / relative).is_file()
        or not filecmp.cmp(LAYER_SOURCE / relative, build / relative, shallow=False)
    ]
    if stale:
        raise LayerNotBuilt(f"the built layer is older than {stale[0]}: make template rebuilds it")
    pinned = {canonicalize_name(pin.name): pin.version for pin in parse_export(requirements.read_text())}
    built = {
        canonicalize_name(dist.metadata["Name"]): dist.version
        for dist in importlib.metadata.distributions(path=[str(build)])
    }
    if built != pinned:
        differing = sorted(
            name for name in pinned.keys() | built.keys() if built.get(name) != pinned.get(name)
        )
        shown = ", ".join(
            f"{name} {built.get(name, 'missing')} (pinned {pinned.get(name, 'none')})" for name in differing
        )
        raise LayerNotBuilt(
            f"the built layer ships other versions than layers/core/requirements.txt: {shown}; "
            "make template rebuilds it"
        )
    return build


def shipped_sources() -> list[str]:
    """The files of ``layers/core/phoneid`` the layer ships, relative to ``layers/core``."""
    return sorted(
        relative
        for path in (LAYER_SOURCE / "phoneid").rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and not _local_only(relative := path.relative_to(LAYER_SOURCE).as_posix())
    )


def _local_only(relative: str) -> bool:
    return any(relative == path or relative.startswith(f"{path}/") for path in LOCAL_ONLY_PATHS)


# --- distributions ---------------------------------------------------------------------------------


def _top_level(entries: Iterable[str]) -> set[str]:
    """The names a distribution's files put at the top of a site-packages directory."""
    names = set()
    for entry in entries:
        first = entry.split("/", 1)[0]
        if first in ("..", "__pycache__", "bin") or first.endswith((".dist-info", ".data")):
            continue
        names.add(first)
    return names


def installed_top_level(distribution: str) -> set[str]:
    files = importlib.metadata.distribution(distribution).files or []
    return _top_level(str(file) for file in files)


def _foreign_extension(path: Path) -> bool:
    """A compiled module this interpreter cannot load: built for another Python, or another machine
    (``abi3`` modules name no machine: their ELF header does)."""
    if not path.name.endswith((".so", ".pyd")) or not path.is_file():
        return False
    suffix = path.name[path.name.index(".") :]
    return suffix not in importlib.machinery.EXTENSION_SUFFIXES or _machine(path) != _machine(
        Path(sys.executable).resolve()
    )


def _machine(path: Path) -> bytes:
    """The ELF header's ``e_machine`` (x86-64, AArch64, ...)."""
    with path.open("rb") as binary:
        return binary.read(20)[18:20]


def layer_distributions(layer: Path) -> dict[str, tuple[list[str], list[Requirement]]]:
    """Each distribution in the layer (canonical name): its files and its requirements."""
    found = {}
    for info in layer.glob("*.dist-info"):
        metadata = importlib.metadata.PathDistribution(info)
        files = [line.split(",", 1)[0] for line in (info / "RECORD").read_text().splitlines() if line]
        requires = [Requirement(text) for text in metadata.requires or []]
        found[canonicalize_name(metadata.metadata["Name"])] = (files, requires)
    return found


def stand_ins(layer: Path) -> set[str]:
    """The layer's distributions that cannot load here, and those pinned exactly to one of them."""
    distributions = layer_distributions(layer)
    foreign = {
        name
        for name, (files, _) in distributions.items()
        if any(_foreign_extension(layer / file) for file in files)
    }
    while True:
        pinning = {
            name
            for name, (_, requires) in distributions.items()
            if name not in foreign
            for requirement in requires
            if canonicalize_name(requirement.name) in foreign
            and any(spec.operator == "==" for spec in requirement.specifier)
        }
        if not pinning:
            return foreign
        foreign |= pinning


def _linked(directory: Path, distributions: Iterable[str]) -> Path:
    """A directory of links to what ``distributions`` installed in this virtualenv."""
    site = Path(importlib.metadata.distribution("boto3").locate_file(""))
    directory.mkdir(parents=True, exist_ok=True)
    for distribution in distributions:
        for name in installed_top_level(distribution):
            link = directory / name
            if not link.exists():
                link.symlink_to(site / name)
    return directory


class LambdaRuntime:
    """Interpreters with Lambda's import path, their links and bytecode kept under ``work``."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.layer = built_layer()
        # The stand-ins for the layer's compiled distributions, the layer, the runtime's boto3; the
        # function's code goes first (``command``'s caller, or ``invoke_command``, puts it there).
        self.sys_path = [
            str(_linked(work / "stand-ins", sorted(stand_ins(self.layer)))),
            str(self.layer),
            str(_linked(work / "runtime", RUNTIME_DISTRIBUTIONS)),
        ]

    def command(self, *arguments: str) -> list[str]:
        """This interpreter, as Lambda's: no site-packages, no PYTHON* variables, no current directory.
        Bytecode goes under ``work``: the layer stays as built (on Lambda it is read-only), and each
        process after the first is spared compiling it. ``arguments``: ``-c CODE``, or a script's."""
        return [sys.executable, "-I", "-S", "-X", f"pycache_prefix={self.work / 'bytecode'}", *arguments]

    def invoke_command(self, code: Path, handler: str, event: Path, answer: Path) -> list[str]:
        """One invocation of ``handler`` (``module.function`` in the function's ``code``) with the
        event in ``event``; its answer, or Lambda's error payload, goes to ``answer`` (stdout is the
        function's log, as on Lambda)."""
        paths = json.dumps([str(code), *self.sys_path])
        return self.command(str(BOOTSTRAP), paths, handler, str(event), str(answer))


BOOTSTRAP = Path(__file__).with_name("lambda_bootstrap.py")


# --- what a handler must never reach ----------------------------------------------------------------


def _closure(requirements: Iterable[Requirement]) -> set[str]:
    """Every distribution ``requirements`` bring, as installed in this virtualenv (extras followed)."""
    wanted = [(canonicalize_name(r.name), frozenset(r.extras)) for r in requirements if _applies(r, set())]
    seen: set[tuple[str, frozenset[str]]] = set()
    found: set[str] = set()
    while wanted:
        name, extras = wanted.pop()
        if name == "phoneid" or (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: nothing of it can be imported either
        found.add(name)
        for requirement in map(Requirement, requires):
            if _applies(requirement, extras):
                wanted.append((canonicalize_name(requirement.name), frozenset(requirement.extras)))
    return found


def _applies(requirement: Requirement, extras: Iterable[str]) -> bool:
    marker = requirement.marker
    return marker is None or any(marker.evaluate({"extra": extra}) for extra in {*extras, ""})


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project


@cache
def runtime_distributions() -> frozenset[str]:
    """What the service's own dependencies (``pyproject.toml``'s ``dependencies``) install."""
    return frozenset(_closure(map(Requirement, _project()["dependencies"])))


@cache
def development_distributions() -> frozenset[str]:
    """What ``pyproject.toml``'s dev and test extras install that the service's own dependencies do not:
    moto, asyncssh, uvicorn, starlette, httpx, pytest, schemathesis and all they bring."""
    extras = _project()["optional-dependencies"]
    development = _closure(Requirement(text) for name in ("dev", "test") for text in extras[name])
    return frozenset(development - runtime_distributions())


@cache
def development_modules() -> frozenset[str]:
    """The top-level import names of ``development_distributions`` (none that a runtime one has too)."""
    runtime = {name for distribution in runtime_distributions() for name in installed_top_level(distribution)}
    return frozenset(
        module_name(name)
        for distribution in development_distributions()
        for name in installed_top_level(distribution) - runtime
        if not name.endswith(".pth")
    )


def module_name(entry: str) -> str:
    """``six.py`` -> ``six``; ``_cffi_backend.cpython-311-x86_64-linux-gnu.so`` -> ``_cffi_backend``."""
    return entry.split(".", 1)[0]
