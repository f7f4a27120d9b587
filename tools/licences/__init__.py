"""The licence of every dependency the gate installs and of everything the layer ships, against an
allow-list of open-source licences (docs/adr/0113-the-licences-dependencies-may-carry.md).

``python -m tools.licences`` checks .venv, checkov's virtualenv and node_modules; ``--layer PATH`` also
the layer ``sam build`` made (`make licences` does both). Maintained tools read the packages:
pip-licenses for Python, license-checker-rseidelsohn for npm. This module only reads what they report
as SPDX licence expressions and judges each against ``tools/licences.toml``:

- a package's metadata says its licence in one of several ways: a ``License-Expression`` (SPDX), a
  ``License:`` field holding an SPDX id, a free name ("Apache 2.0", "MIT License") or the whole licence
  text, or only trove classifiers; npm's ``license`` field, or license-checker's guess from the
  licence file (marked ``*``). What names one licence without doubt is normalised to its SPDX id;
  anything else (a classifier with no version, "BSD", several classifiers, a guess) is unclear, and
  the package needs an entry in ``[[clarified]]``: the licence its licence file states and why;
- a licence expression is allowed where each ``AND`` operand is, and one ``OR`` alternative is enough;
- each scope (``tools``: what the gate runs; ``layer``: what Lambda runs) has its own list, and an
  ``[[allowed]]`` entry lets one named package carry a licence its scope's list lacks, with a reason.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from tools.licences.judging import (
    POLICY_NAME,
    ROOT,
    Package,
    Policy,
    judge,
    load_policy,
)
from tools.licences.reading import layer, npm, python_environment


def check(found: dict[str, tuple[str, list[Package]]], policy: Policy) -> list[str]:
    """Every refusal over the environments ``found`` (name: its scope and its packages)."""
    refusals = []
    for scope, packages in found.values():
        refusals += [v.refusal for v in (judge(p, scope, policy) for p in packages) if v.refusal]
    return refusals


def layer_without_texts(path: Path, packages: Iterable[Package] | None = None) -> list[str]:
    """What the layer at ``path`` ships without its licence text: each distribution's (LICENSE,
    COPYING… in its dist-info, where pip installs them) and PhoneID's own (PHONEID-LICENSE)."""
    missing = [
        f"{package.name} {package.version} (in the layer): ships no licence text; layers/core/Makefile must "
        "keep its dist-info's licence files"
        for package in (layer(path) if packages is None else packages)
        if package.licence_file is None
    ]
    if not (path / "PHONEID-LICENSE").is_file():
        missing.append("no PHONEID-LICENSE in the layer: layers/core/Makefile copies it; make template")
    return missing


def main(arguments: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.licences", description=__doc__.split("\n\n")[0])
    parser.add_argument("--layer", type=Path, help="also the layer sam build made (its python/ folder)")
    options = parser.parse_args(arguments)
    policy = load_policy()
    found: dict[str, tuple[str, list[Package]]] = {
        ".venv": ("tools", python_environment(ROOT / ".venv" / "bin" / "python", ".venv")),
        ".venv/checkov": ("tools", python_environment(ROOT / ".venv/checkov/bin/python", ".venv/checkov")),
        "node_modules": ("tools", npm(ROOT)),
    }
    if options.layer is not None:
        found["the layer"] = ("layer", layer(options.layer))
    refusals = check(found, policy)
    if options.layer is not None:
        refusals += layer_without_texts(options.layer, found["the layer"][1])
    counted = ", ".join(f"{len(packages)} in {where}" for where, (_, packages) in found.items())
    if refusals:
        print(f"licences: {len(refusals)} refused, of {counted}:", file=sys.stderr)
        for refusal in refusals:
            print(f"- {refusal}", file=sys.stderr)
        return 1
    print(f"licences: every package allowed ({counted}; {POLICY_NAME})")
    return 0
