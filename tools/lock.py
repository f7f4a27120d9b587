"""The lock's two readers besides `uv sync` (docs/adr/0081-one-lock-for-the-environment-and-the-layer.md).

``python tools/lock.py uv`` prints the hashed requirement of the uv that uv.lock names: `make setup`
installs it with pip, then uv installs the rest of the lock.

``uv export ... | python tools/lock.py layer`` prints the layer's requirements: the project's runtime
dependencies as uv.lock pins them, with their hashes, for Lambda's python3.13 on arm64. uv exports
one universal set with environment markers; pip would evaluate those for the machine that builds, not
for Lambda, so they are evaluated here and the layer is installed with ``--no-deps``. A package with
no wheel Lambda can load stops the export, before a build that cannot succeed.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "uv.lock"
LAYER_REQUIREMENTS = ROOT / "layers" / "core" / "requirements.txt"

# Lambda's python3.13 runtime on arm64 (Amazon Linux 2023), as environment markers see it.
LAMBDA_ENVIRONMENT = {
    "implementation_name": "cpython",
    "implementation_version": "3.13.0",
    "os_name": "posix",
    "platform_machine": "aarch64",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_system": "Linux",
    "platform_version": "",
    "python_full_version": "3.13.0",
    "python_version": "3.13",
    "sys_platform": "linux",
}
# What `pip install --platform manylinux2014_aarch64 --python-version 3.13 --implementation cp`
# accepts (layers/core/Makefile).
LAMBDA_PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_17_aarch64")

HEADER = """\
# The layer's runtime dependencies for Lambda's python3.13 on arm64, exported from uv.lock by
# `make lock` (tools/lock.py): edit pyproject.toml and run `make lock`, never this file.
"""


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    marker: str
    hashes: tuple[str, ...]

    def requirement(self) -> str:
        lines = [f"{self.name}=={self.version}", *(f"    --hash={digest}" for digest in self.hashes)]
        return " \\\n".join(lines)


def locked_package(name: str, lock: Path = LOCK) -> dict[str, Any]:
    packages = [p for p in tomllib.loads(lock.read_text())["package"] if p["name"] == name]
    if len(packages) != 1:
        raise SystemExit(f"uv.lock holds {len(packages)} versions of {name}, not one")
    return packages[0]


def uv_requirement(lock: Path = LOCK) -> str:
    package = locked_package("uv", lock)
    files = [*package.get("wheels", []), *([package["sdist"]] if "sdist" in package else [])]
    return " ".join([f"uv=={package['version']}", *(f"--hash={file['hash']}" for file in files)])


def parse_export(text: str) -> Iterator[Pin]:
    """The pins of a ``uv export --format requirements-txt``: continuation lines joined, comments
    dropped."""
    logical: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if logical and logical[-1].endswith("\\"):
            logical[-1] = logical[-1][:-1].strip() + " " + line
        else:
            logical.append(line)
    for line in logical:
        requirement, *hashes = (part.strip() for part in line.split("--hash="))
        pin, _, marker = requirement.partition(";")
        name, _, version = pin.strip().partition("==")
        if not version:
            raise SystemExit(f"not an exact pin: {line}")
        yield Pin(name.strip(), version.strip(), marker.strip(), tuple(hashes))


def for_lambda(pins: Iterable[Pin]) -> list[Pin]:
    from packaging.markers import Marker

    return [pin for pin in pins if not pin.marker or Marker(pin.marker).evaluate(dict(LAMBDA_ENVIRONMENT))]


def lambda_tags() -> frozenset[object]:
    from packaging import tags

    return frozenset(
        [
            *tags.cpython_tags((3, 13), abis=["cp313"], platforms=LAMBDA_PLATFORMS),
            *tags.compatible_tags((3, 13), "cp313", platforms=LAMBDA_PLATFORMS),
        ]
    )


def without_lambda_wheel(pins: Iterable[Pin], lock: Path = LOCK) -> list[str]:
    """The pins of which uv.lock lists no wheel Lambda's python3.13 on arm64 can install."""
    from packaging.utils import canonicalize_name, parse_wheel_filename

    supported = lambda_tags()
    wheels: dict[tuple[str, str], list[str]] = {}
    for package in tomllib.loads(lock.read_text())["package"]:
        key = (canonicalize_name(package["name"]), package.get("version", ""))
        wheels[key] = [wheel["url"].rsplit("/", 1)[-1] for wheel in package.get("wheels", [])]
    missing = []
    for pin in pins:
        files = wheels.get((canonicalize_name(pin.name), pin.version), [])
        if not any(supported & parse_wheel_filename(file)[3] for file in files):
            missing.append(f"{pin.name}=={pin.version}")
    return missing


def layer_requirements(export: str) -> str:
    pins = for_lambda(parse_export(export))
    missing = without_lambda_wheel(pins)
    if missing:
        raise SystemExit(f"no wheel for Lambda's python3.13 on arm64: {', '.join(missing)}")
    return HEADER + "".join(pin.requirement() + "\n" for pin in pins)


def main(argv: list[str]) -> None:
    match argv:
        case ["uv"]:
            print(uv_requirement())
        case ["layer"]:
            sys.stdout.write(layer_requirements(sys.stdin.read()))
        case _:
            raise SystemExit("usage: tools/lock.py uv | layer < export")


if __name__ == "__main__":
    main(sys.argv[1:])
