"""Every name of a third-party library the local emulation replaces, in one registry.

Only moto is patched: it never ships, and the local stack needs what AWS does that moto does not
(docs/adr/0072-patches-of-moto.md). The libraries Lambda runs (botocore, boto3, Powertools,
pydantic...) are never patched: what the gate runs is what Lambda runs.

A patch names its target by module and attribute path, the releases it was written for, and what
the target must be. ``apply`` refuses, loudly, a target that is missing or not what it was written
against, and an installed release outside the patch's range: a patch that silently no longer
applies (its target renamed or moved) would leave the emulation doing what moto does while the
suite believes otherwise. Applying is idempotent; every process that emulates AWS applies the whole
registry once (``apply_all``), so no test runs on a moto that another test happened to patch first.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# What may be patched at all: the emulation's own dependency, never a library that ships.
PATCHABLE = frozenset({"moto"})


class PatchError(RuntimeError):
    """A patch that cannot be applied as written: the emulation must not start on it."""


@dataclass(frozen=True)
class Patch:
    """``module``'s ``attribute`` (a dotted path: ``Class.method`` or a module global) replaced by
    ``replace(original)``; ``expected(original)`` says the target is the one written against."""

    why: str
    module: str
    attribute: str
    replace: Callable[[Any], Any]
    expected: Callable[[Any], bool]
    package: str = "moto"
    # The releases the patch was checked against (the lock pins one): another is refused until the
    # patch is read against it and its release added.
    written_for: frozenset[str] = frozenset({"5.2.5"})

    @property
    def target(self) -> str:
        return f"{self.module}:{self.attribute}"


def named(name: str) -> Callable[[Any], bool]:
    """The target is a function (or method) of that name: the name moto gave the behaviour replaced."""
    return lambda original: callable(original) and getattr(original, "__name__", None) == name


REGISTRY: dict[str, Patch] = {}  # target -> its patch
_applied: dict[str, Any] = {}  # target -> the replacement in place
_lock = threading.Lock()


def register(*patches: Patch) -> tuple[Patch, ...]:
    for patch in patches:
        if patch.package not in PATCHABLE:
            raise PatchError(f"{patch.target}: {patch.package} ships; only {sorted(PATCHABLE)} is patched")
        if patch.target in REGISTRY and REGISTRY[patch.target] is not patch:
            raise PatchError(f"{patch.target} is patched twice; one patch per target")
        REGISTRY[patch.target] = patch
    return patches


def _owner(patch: Patch) -> tuple[Any, str]:
    try:
        owner: Any = importlib.import_module(patch.module)
    except ImportError as error:
        raise PatchError(f"{patch.target}: module missing ({error})") from error
    *path, name = patch.attribute.split(".")
    for part in path:
        if not hasattr(owner, part):
            raise PatchError(f"{patch.target}: {part} is missing")
        owner = getattr(owner, part)
    if not hasattr(owner, name):
        raise PatchError(f"{patch.target}: {name} is missing")
    return owner, name


def _check_version(patch: Patch) -> None:
    installed = importlib.metadata.version(patch.package)
    if installed not in patch.written_for:
        raise PatchError(
            f"{patch.target}: written for {patch.package} {', '.join(sorted(patch.written_for))},"
            f" {installed} is installed; read the patch against it"
            " (docs/adr/0072-patches-of-moto.md#the-patches) and add the release to its written_for"
        )


def apply(*patches: Patch) -> None:
    """Each patch in place, or PatchError before any of ``patches`` is applied."""
    with _lock:
        pending = [patch for patch in patches if patch.target not in _applied]
        targets = []
        for patch in pending:
            _check_version(patch)
            owner, name = _owner(patch)
            original = getattr(owner, name)
            if not patch.expected(original):
                raise PatchError(f"{patch.target}: not the object the patch was written for ({original!r})")
            targets.append((patch, owner, name, original))
        for patch, owner, name, original in targets:
            replacement = patch.replace(original)
            setattr(owner, name, replacement)
            _applied[patch.target] = replacement


def apply_all() -> None:
    """The whole registry: every module that registers patches imported, then each applied."""
    # Imported here, not at the top: they import this module to register their patches.
    import phoneid_dev.emulation.dynamodb_fidelity
    import phoneid_dev.emulation.paged_scans
    import phoneid_dev.emulation.quicker_calls
    import phoneid_dev.emulation.untracked_items
    import phoneid_dev.workflows.eventbridge
    import phoneid_dev.workflows.lambda_tasks
    import phoneid_dev.workflows.retry_waits
    import phoneid_dev.workflows.s3_events  # noqa: F401

    apply(*REGISTRY.values())


def is_applied(patch: Patch) -> bool:
    """Whether the patch's replacement is the object its target holds now."""
    replacement = _applied.get(patch.target)
    if replacement is None:
        return False
    owner, name = _owner(patch)
    return inspect.getattr_static(owner, name) is replacement
