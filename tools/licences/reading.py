"""What the maintained tools report of the installed packages: pip-licenses for Python (an
environment, or the built layer), license-checker-rseidelsohn for npm."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from tools.licences.judging import ROOT, UNKNOWN, Package

PIP_LICENSES = ["--from=all", "--format=json", "--with-system", "--with-license-file"]


def python_environment(python: Path, where: str) -> list[Package]:
    """Every distribution the interpreter ``python`` sees (its virtualenv), as pip-licenses reads it."""
    ran = _run([sys.executable, "-m", "piplicenses", f"--python={python}", *PIP_LICENSES])
    return _python_packages(json.loads(ran), where)


# pip-licenses reads the distributions on an interpreter's sys.path (``--python``). The layer has no
# interpreter here (its wheels are CPython 3.13 for arm64), and pip-licenses empties PYTHONPATH for the
# interpreter it asks; so its own command runs with sys.path set to the layer alone (json, which it
# imports late, imported before).
_ONLY_THE_LAYER = "import json, sys, piplicenses; sys.path[:] = [sys.argv.pop(1)]; piplicenses.main()"


def layer(path: Path, where: str = "the layer") -> list[Package]:
    """Every distribution the built layer ships, as pip-licenses reads it."""
    ran = _run([sys.executable, "-c", _ONLY_THE_LAYER, str(path), *PIP_LICENSES])
    return _python_packages(json.loads(ran), where)


def _python_packages(rows: Iterable[dict[str, str]], where: str) -> list[Package]:
    return [
        Package(
            ecosystem="python",
            name=row["Name"],
            version=row["Version"],
            where=where,
            expression=row.get("License-Expression"),
            declared=row.get("License-Metadata"),
            classifiers=tuple(
                each for each in row.get("License-Classifier", "").split("; ") if each and each != UNKNOWN
            ),
            licence_file=row["LicenseFile"] if _has_text(row) else None,
        )
        for row in rows
    ]


def _has_text(row: dict[str, str]) -> bool:
    return row.get("LicenseText", UNKNOWN) != UNKNOWN


def npm(root: Path, where: str = "node_modules") -> list[Package]:
    """Every package installed under ``root``'s node_modules, as license-checker-rseidelsohn reads it."""
    checker = ROOT / "node_modules" / ".bin" / "license-checker-rseidelsohn"
    ran = _run([str(checker), "--start", str(root), "--json", "--excludePrivatePackages"])
    packages = []
    for spec, row in json.loads(ran).items():
        name, _, version = spec.rpartition("@")
        reported = row.get("licenses")
        if isinstance(reported, list):  # the old "licenses" array: which of them applies is not said
            reported = " / ".join(reported)
        packages.append(
            Package("npm", name, version, where, expression=reported, licence_file=row.get("licenseFile"))
        )
    return packages


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)  # noqa: S603
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])} ... failed:\n{done.stderr}")
    return done.stdout
