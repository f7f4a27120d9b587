"""One lock: the layer Lambda runs holds the versions the gate ran
(docs/adr/0081-one-lock-for-the-environment-and-the-layer.md).

layers/core/requirements.txt is uv.lock's export for Lambda (`make lockcheck` holds it to the lock);
these tests hold the running environment and the built layer to it, package by package.
"""

from __future__ import annotations

import os
import tomllib
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


def test_the_gate_runs_the_versions_the_layer_pins() -> None:
    differing = {
        name: {"installed": installed_version(name), "layer": version}
        for name, version in pinned_versions().items()
        if installed_version(name) != version
    }
    assert differing == {}, "this environment is not the lock: make setup"


def test_the_layer_pins_every_runtime_dependency_and_nothing_else() -> None:
    # boto3 and botocore included: the layer ships the SDK the gate ran, not the runtime's.
    assert runtime_closure() == set(pinned_versions())
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
    assert built == pinned_versions()
    assert built == {name: installed_version(name) for name in built}


def test_the_package_says_the_version_pyproject_gives_it() -> None:
    # The layer ships no distribution metadata: phoneid.__version__ (webhooks' User-Agent) is the
    # only version Lambda can read, and it must be the one released.
    import phoneid

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert phoneid.__version__ == project["version"]
