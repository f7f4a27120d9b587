"""The registry of moto patches: each applied, only moto patched, and a patch whose target moved, or
that meets a release it was not written for, refused before the emulation starts."""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import types
from pathlib import Path

import pytest
from botocore import signers, useragent

from phoneid_dev import patches
from phoneid_dev.patches import REGISTRY, Patch, PatchError, apply, apply_all, is_applied, named

MODULE = "tests.unit.patch_target"


@pytest.fixture
def target(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A module of its own to patch, with a function ``greet``."""
    module = types.ModuleType(MODULE)

    def greet() -> str:
        return "hello"

    module.greet = greet  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, MODULE, module)
    monkeypatch.setattr(patches, "_applied", {})
    monkeypatch.setattr(importlib.metadata, "version", lambda package: "5.2.5")
    return module


def louder(original: object) -> object:
    return lambda: "HELLO"


def test_every_registered_patch_is_applied_and_only_moto_is_patched() -> None:
    apply_all()

    assert len(REGISTRY) >= 20
    assert [target for target, patch in REGISTRY.items() if not is_applied(patch)] == []
    assert {patch.package for patch in REGISTRY.values()} == {"moto"}
    assert all(target.startswith("moto.") for target in REGISTRY)


def test_the_libraries_lambda_runs_are_as_published() -> None:
    apply_all()

    # botocore signs and writes its User-Agent with its own functions (no patch replaced them)
    assert inspect.getattr_static(signers.RequestSigner, "sign").__module__ == "botocore.signers"
    assert not hasattr(useragent.sanitize_user_agent_string_component, "__wrapped__")


def test_a_patch_replaces_its_target_once(target: types.ModuleType) -> None:
    patch = Patch(why="louder", module=MODULE, attribute="greet", replace=louder, expected=named("greet"))

    apply(patch)
    apply(patch)  # a second apply changes nothing

    assert target.greet() == "HELLO"
    assert is_applied(patch)


def test_a_missing_target_is_refused(target: types.ModuleType) -> None:
    gone = Patch(why="x", module=MODULE, attribute="wave", replace=louder, expected=named("wave"))
    nested = Patch(why="x", module=MODULE, attribute="Greeter.greet", replace=louder, expected=named("greet"))

    with pytest.raises(PatchError, match="wave is missing"):
        apply(gone)
    with pytest.raises(PatchError, match="Greeter is missing"):
        apply(nested)


def test_a_target_that_is_not_what_the_patch_was_written_for_is_refused(target: types.ModuleType) -> None:
    target.greet = lambda: "hi"  # type: ignore[attr-defined]
    patch = Patch(why="louder", module=MODULE, attribute="greet", replace=louder, expected=named("greet"))

    with pytest.raises(PatchError, match="not the object the patch was written for"):
        apply(patch)
    assert target.greet() == "hi"


def test_a_release_the_patch_was_not_written_for_is_refused(
    target: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.metadata, "version", lambda package: "5.3.0")
    patch = Patch(why="louder", module=MODULE, attribute="greet", replace=louder, expected=named("greet"))

    with pytest.raises(PatchError, match=r"written for moto 5\.2\.5, 5\.3\.0 is installed"):
        apply(patch)
    assert target.greet() == "hello"


def test_nothing_is_applied_when_one_patch_of_a_group_is_refused(target: types.ModuleType) -> None:
    good = Patch(why="louder", module=MODULE, attribute="greet", replace=louder, expected=named("greet"))
    gone = Patch(why="x", module=MODULE, attribute="wave", replace=louder, expected=named("wave"))

    with pytest.raises(PatchError):
        apply(good, gone)

    assert target.greet() == "hello"


def test_a_shipping_library_cannot_be_registered() -> None:
    patch = Patch(
        why="faster signing",
        module="botocore.signers",
        attribute="RequestSigner.sign",
        replace=louder,
        expected=named("sign"),
        package="botocore",
    )

    with pytest.raises(PatchError, match="botocore ships"):
        patches.register(patch)


def _expanded(written: str) -> list[str]:
    """``a.{b,c}.d`` → ``a.b.d``, ``a.c.d`` (one brace group)."""
    found = re.fullmatch(r"([^{]*)\{([^}]*)\}(.*)", written)
    if found is None:
        return [written]
    head, choices, tail = found.groups()
    return [f"{head}{choice}{tail}" for choice in choices.split(",")]


def test_the_decision_record_lists_every_registered_patch() -> None:
    apply_all()
    record = (Path(__file__).resolve().parents[2] / "docs" / "adr" / "0072-patches-of-moto.md").read_text()
    section = record.split("\n### The patches\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    listed = {
        f"moto.{target}"
        for row in rows
        for written in re.findall(r"`([^`]+)`", row.split(" | ", 1)[0])
        for target in _expanded(written)
    }

    assert listed == {target.replace(":", ".") for target in REGISTRY}
