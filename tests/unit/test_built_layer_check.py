"""The suite refuses a built layer that is not what today's sources and requirements.txt make
(``tests.lambda_runtime.built_layer``): the tests of the built layer would otherwise pass on what
Lambda no longer runs. Each case is a layer directory made here, as sam build lays one out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.lambda_runtime import LAYER_SOURCE, LayerNotBuilt, built_layer

PINS = {"pydantic": "2.13.5", "phonenumbers": "9.0.43"}


def requirements(directory: Path, pins: dict[str, str]) -> Path:
    """A requirements.txt as `make lock` exports it: exact pins with their hashes."""
    path = directory / "requirements.txt"
    path.write_text(
        "# exported from uv.lock\n"
        + "".join(f"{name}=={version} \\\n    --hash=sha256:{'0' * 64}\n" for name, version in pins.items())
    )
    return path


def layer(directory: Path, distributions: dict[str, str]) -> Path:
    """A built layer: today's phoneid, and each distribution's metadata as pip installs it."""
    build = directory / "python"
    shutil.copytree(LAYER_SOURCE / "phoneid", build / "phoneid", ignore=shutil.ignore_patterns("__pycache__"))
    for name, version in distributions.items():
        info = build / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return build


def test_a_layer_of_todays_sources_and_the_pinned_versions_is_taken(tmp_path: Path) -> None:
    build = layer(tmp_path, PINS)

    assert built_layer(build, requirements(tmp_path, PINS)) == build


def test_a_layer_with_another_version_than_the_pin_is_refused_naming_both(tmp_path: Path) -> None:
    build = layer(tmp_path, {**PINS, "pydantic": "2.12.0"})

    with pytest.raises(LayerNotBuilt, match=r"pydantic 2\.12\.0 \(pinned 2\.13\.5\).*make template"):
        built_layer(build, requirements(tmp_path, PINS))


def test_a_layer_missing_a_pinned_distribution_or_shipping_an_unpinned_one_is_refused(tmp_path: Path) -> None:
    missing = layer(tmp_path / "missing", {"pydantic": "2.13.5"})
    extra = layer(tmp_path / "extra", {**PINS, "requests": "2.32.0"})

    with pytest.raises(LayerNotBuilt, match=r"phonenumbers missing \(pinned 9\.0\.43\)"):
        built_layer(missing, requirements(tmp_path, PINS))
    with pytest.raises(LayerNotBuilt, match=r"requests 2\.32\.0 \(pinned none\)"):
        built_layer(extra, requirements(tmp_path, PINS))


def test_a_layer_older_than_a_source_file_is_refused(tmp_path: Path) -> None:
    build = layer(tmp_path, PINS)
    (build / "phoneid" / "config.py").write_text("# the module as it was before\n")

    with pytest.raises(LayerNotBuilt, match=r"older than phoneid/config\.py"):
        built_layer(build, requirements(tmp_path, PINS))


def test_no_layer_at_all_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(LayerNotBuilt, match="make template builds it"):
        built_layer(tmp_path / "python", requirements(tmp_path, PINS))
