"""One lock: the layer Lambda runs holds the versions the gate ran
(docs/adr/0081-one-lock-for-the-environment-and-the-layer.md).

layers/core/requirements.txt is uv.lock's export for Lambda (`make lockcheck` holds it to the lock);
these tests hold the running environment and the built layer to it, package by package.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tools.lock import (
    LAMBDA_ENVIRONMENT,
    LAYER_REQUIREMENTS,
    LOCK,
    ROOT,
    Pin,
    parse_export,
    without_lambda_wheel,
)

# `make test` sets it after `make template` has built the layer: there, a missing build fails.
LAYER_BUILD = Path(os.environ.get("PHONEID_LAYER_BUILD") or ROOT / ".aws-sam/build/CoreLayer/python")


def layer_pins() -> list[Pin]:
    return list(parse_export(LAYER_REQUIREMENTS.read_text()))


def pinned_versions() -> dict[str, str]:
    return {canonicalize_name(pin.name): pin.version for pin in layer_pins()}


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def runtime_closure(project: str = "phoneid") -> set[str]:
    """The distributions the project's runtime dependencies reach, by the installed metadata, with
    markers read as on Lambda; extras are followed where a requirement names them."""
    reached: set[str] = set()
    seen: set[tuple[str, frozenset[str]]] = set()
    pending: list[tuple[str, frozenset[str]]] = [(project, frozenset())]
    while pending:
        name, extras = pending.pop()
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is not None and not any(
                requirement.marker.evaluate({**LAMBDA_ENVIRONMENT, "extra": extra})
                for extra in extras or {""}
            ):
                continue
            dependency = (canonicalize_name(requirement.name), frozenset(requirement.extras))
            reached.add(dependency[0])
            if dependency not in seen:
                seen.add(dependency)
                pending.append(dependency)
    return reached


def differences(found: Mapping[str, str | None], wanted: Mapping[str, str | None], found_as: str) -> str:
    """Each package where ``found`` differs from ``wanted``: missing, extra or at another version."""
    return "; ".join(
        f"{name} missing (pinned {wanted[name]})"
        if name not in found
        else f"{name} {found[name]} {found_as} (not pinned)"
        if name not in wanted
        else f"{name} {found[name]} {found_as} (pinned {wanted[name]})"
        for name in sorted(found.keys() | wanted.keys())
        if found.get(name) != wanted.get(name) or (name in found) != (name in wanted)
    )


def test_a_difference_names_each_package_missing_extra_or_at_another_version() -> None:
    found = {"boto3": "1.2", "six": "1.17.0", "moto": "5.0"}
    wanted = {"boto3": "1.3", "six": "1.17.0", "botocore": "1.3"}

    assert differences(found, wanted, "built") == (
        "boto3 1.2 built (pinned 1.3); botocore missing (pinned 1.3); moto 5.0 built (not pinned)"
    )
    assert differences(found, found, "built") == ""


def test_the_gate_runs_the_versions_the_layer_pins() -> None:
    differing = {
        name: {"installed": installed_version(name), "layer": version}
        for name, version in pinned_versions().items()
        if installed_version(name) != version
    }
    # `make lock` syncs .venv to uv.lock and exports the layer's pins from it again: either may be behind
    installed = {name: installed_version(name) for name in pinned_versions()}
    assert differing == {}, (
        f"this environment runs other versions than layers/core/requirements.txt pins: "
        f"{differences({n: v for n, v in installed.items() if v}, pinned_versions(), 'installed')}: make lock"
    )


def test_the_layer_pins_every_runtime_dependency_and_nothing_else() -> None:
    # boto3 and botocore included: the layer ships the SDK the gate ran, not the runtime's.
    closure, pinned = runtime_closure(), set(pinned_versions())
    assert closure == pinned, (
        "layers/core/requirements.txt does not pin exactly the runtime dependencies of pyproject.toml "
        f"(not pinned: {sorted(closure - pinned)}; pinned, not needed: {sorted(pinned - closure)}): make lock"
    )
    assert {"boto3", "botocore", "s3transfer"} <= set(pinned_versions())


def test_botocore_runs_here_without_what_the_layer_lacks() -> None:
    # awscrt is installed for the SAM CLI; with it botocore would sign and checksum through the CRT,
    # a path the functions never take on Lambda.
    import botocore.auth
    import botocore.compat

    assert "awscrt" not in pinned_versions()
    assert botocore.compat.HAS_CRT is False
    assert botocore.auth.AUTH_TYPE_MAPS["v4"] is botocore.auth.SigV4Auth


def test_the_layer_pins_are_the_locked_versions_with_their_hashes() -> None:
    locked: dict[str, list[dict[str, Any]]] = {}
    for package in tomllib.loads(LOCK.read_text())["package"]:
        locked.setdefault(canonicalize_name(package["name"]), []).append(package)
    for pin in layer_pins():
        matching = [p for p in locked.get(canonicalize_name(pin.name), []) if p.get("version") == pin.version]
        assert len(matching) == 1, f"uv.lock does not hold {pin.name}=={pin.version}: make lock"
        [package] = matching
        files = [*package.get("wheels", []), *([package["sdist"]] if "sdist" in package else [])]
        assert set(pin.hashes) == {file["hash"] for file in files}, pin.name


def test_every_pinned_package_has_a_wheel_lambda_can_load() -> None:
    # The layer is built for python3.13 on arm64 from wheels only, on any machine, with no Docker.
    assert without_lambda_wheel(layer_pins()) == []


def test_a_marker_is_read_as_lambda_reads_it() -> None:
    assert Marker("python_version >= '3.13' and platform_machine == 'aarch64'").evaluate(
        dict(LAMBDA_ENVIRONMENT)
    )
    assert not Marker("sys_platform == 'win32'").evaluate(dict(LAMBDA_ENVIRONMENT))


def test_the_built_layer_holds_exactly_the_versions_the_gate_ran() -> None:
    if not LAYER_BUILD.is_dir():
        if os.environ.get("PHONEID_LAYER_BUILD"):
            pytest.fail(f"no layer built at {LAYER_BUILD}: make template")
        pytest.skip("no layer built (make template)")
    # Given the distributions sam build installed into the layer
    built = {
        canonicalize_name(dist.metadata["Name"]): dist.version
        for dist in metadata.distributions(path=[str(LAYER_BUILD)])
    }

    # Then they are the pinned ones, each at the version this environment runs
    pinned = pinned_versions()
    assert built == pinned, (
        f"the built layer is not layers/core/requirements.txt: {differences(built, pinned, 'built')}: "
        "make template rebuilds it"
    )
    installed = {name: installed_version(name) for name in built}
    assert built == installed, (
        f"this environment runs other versions than the layer ships: "
        f"{differences({n: v for n, v in installed.items() if v}, built, 'installed')}: make lock"
    )


def test_the_package_says_the_version_pyproject_gives_it() -> None:
    # The layer ships no distribution metadata: phoneid.__version__ (webhooks' User-Agent) is the
    # only version Lambda can read, and it must be the one released.
    import phoneid

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert phoneid.__version__ == project["version"]
