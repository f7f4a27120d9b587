"""The licence check's reading of package metadata and its verdicts (tools/licences/,
docs/adr/0113-the-licences-dependencies-may-carry.md): what pip-licenses and license-checker report,
normalised to SPDX, judged against an allow-list, each refusal naming the package and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tools.licences.judging import (
    Allowed,
    Clarified,
    Licence,
    Package,
    Policy,
    Unclear,
    judge,
    load_policy,
    normalise,
    permitted,
)

PERMISSIVE = frozenset({"MIT", "Apache-2.0", "BSD-3-Clause", "BSD-2-Clause", "PSF-2.0"})


def python(name: str = "example", version: str = "1.0", **metadata: object) -> Package:
    return Package("python", name, version, ".venv", **metadata)  # type: ignore[arg-type]


def npm(reported: str, name: str = "example", version: str = "1.0") -> Package:
    return Package(
        "npm", name, version, "node_modules", expression=reported, licence_file=f"/n/{name}/LICENSE"
    )


def policy(**entries: object) -> Policy:
    return Policy(
        scopes={"tools": PERMISSIVE | {"MPL-2.0"}, "layer": PERMISSIVE},
        **entries,  # type: ignore[arg-type]
    )


# --- reading what a package's metadata says ---------------------------------------------------------


@pytest.mark.parametrize(
    ("metadata", "licence"),
    [
        ({"expression": "mit OR apache-2.0"}, "MIT OR Apache-2.0"),  # License-Expression, as SPDX spells it
        ({"expression": "UNKNOWN", "declared": "BSD-3-Clause"}, "BSD-3-Clause"),  # an SPDX id in License:
        ({"expression": "UNKNOWN", "declared": "Apache License, Version 2.0"}, "Apache-2.0"),  # a free name
        ({"declared": "MIT license", "classifiers": ("MIT License",)}, "MIT"),
        ({"classifiers": ("MIT License",)}, "MIT"),  # a classifier naming one licence
        ({"classifiers": ("Mozilla Public License 2.0 (MPL 2.0)",)}, "MPL-2.0"),
        # the whole licence text in License: its classifier names it
        ({"declared": "MIT License\n\nCopyright (c) 2024 A. Person\n\nPermission is hereby granted...",
          "classifiers": ("MIT License",)}, "MIT"),
    ],
)  # fmt: skip
def test_metadata_naming_one_licence_reads_as_its_spdx_expression(
    metadata: dict[str, Any], licence: str
) -> None:
    assert normalise(python(**metadata)) == Licence(licence)


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        ({"classifiers": ("BSD License",)}, "the classifier 'BSD License' does not say which licence"),
        ({"declared": "BSD", "classifiers": ("BSD License",)}, "the classifier 'BSD License'"),
        ({"classifiers": ("Apache Software License",)}, "'Apache Software License' does not say"),
        ({"classifiers": ("MIT License", "Python Software Foundation License")},
         "its classifiers name MIT and PSF-2.0, without saying whether both apply or either"),
        ({"declared": "Dual License"}, "its License field 'Dual License' names no licence"),
        ({"expression": "UNKNOWN", "declared": "UNKNOWN"}, "its metadata names no licence"),
        ({"expression": "Apache 2.0"}, "its License-Expression 'Apache 2.0' is not an SPDX expression"),
        ({"declared": "Copyright (c) 2020\n\nPermission is hereby granted, free of charge..."},
         "names no licence SPDX knows"),
    ],
)  # fmt: skip
def test_metadata_that_does_not_name_one_licence_is_unclear(metadata: dict[str, Any], why: str) -> None:
    reading = normalise(python(**metadata))

    assert isinstance(reading, Unclear)
    assert why in reading.why


def test_npm_licences_are_read_from_package_json_and_a_guess_is_unclear() -> None:
    assert normalise(npm("(MIT OR CC0-1.0)")) == Licence("(MIT OR CC0-1.0)")
    assert normalise(npm("ISC")) == Licence("ISC")
    # license-checker marks a licence guessed from the files with *, and says "Public Domain" for
    # any text that contains the phrase, Prove's CC BY-NC-ND 4.0 among them
    assert normalise(npm("MIT*")) == Unclear(
        "its package.json names no licence; license-checker guessed 'MIT*' from its files"
    )
    assert normalise(npm("Public Domain")) == Unclear("'Public Domain' is not an SPDX expression")
    assert isinstance(normalise(npm("UNKNOWN")), Unclear)
    assert isinstance(normalise(npm("Custom: https://example.com/licence")), Unclear)


@pytest.mark.parametrize(
    ("expression", "allowed"),
    [
        ("MIT", True),
        ("GPL-3.0-only", False),
        ("MIT OR GPL-3.0-only", True),  # one alternative is enough
        ("GPL-3.0-only OR MIT", True),
        ("MIT AND GPL-3.0-only", False),  # every part must be allowed
        ("Apache-2.0 AND BSD-3-Clause", True),
        ("(MIT OR GPL-3.0-only) AND Apache-2.0", True),
        ("(MIT AND GPL-3.0-only) OR AGPL-3.0-only", False),
        ("Apache-2.0 WITH LLVM-exception", True),
        ("GPL-2.0-only WITH Classpath-exception-2.0", False),
    ],
)
def test_an_expression_is_allowed_when_each_part_is_and_one_alternative_suffices(
    expression: str, allowed: bool
) -> None:
    assert permitted(expression, PERMISSIVE) is allowed


# --- verdicts --------------------------------------------------------------------------------------


def test_a_package_under_an_allowed_licence_passes() -> None:
    verdict = judge(python("pydantic", "2.13.5", expression="MIT"), "layer", policy())

    assert verdict.ok
    assert verdict.licence == "MIT"


def test_a_non_commercial_no_derivatives_package_is_refused_saying_what_to_do() -> None:
    # Given a package under CC BY-NC-ND 4.0, as its package.json would name it
    package = npm("CC-BY-NC-ND-4.0", name="@prove-identity/prove-api", version="0.9.6")

    # When it is judged where the gate's tools are installed
    verdict = judge(package, "tools", policy())

    # Then it is refused, naming the package, its version, the licence found and what to do
    assert not verdict.ok
    assert verdict.refusal == (
        "@prove-identity/prove-api 0.9.6 (npm, in node_modules): CC-BY-NC-ND-4.0 is not allowed in 'tools' "
        "(tools/licences.toml); drop or replace the dependency, or, where the licence is open source and the "
        "use fits docs/adr/0113-the-licences-dependencies-may-carry.md, allow it there with a reason"
    )


def test_proves_sdk_as_license_checker_reports_it_is_refused_as_unclear() -> None:
    # Its package.json names no licence; license-checker reads "Public Domain" in the CC text
    package = npm("Public Domain", name="@prove-identity/prove-api", version="0.9.6")

    verdict = judge(package, "tools", load_policy())

    assert not verdict.ok
    assert verdict.refusal is not None
    assert verdict.refusal.startswith(
        "@prove-identity/prove-api 0.9.6 (npm, in node_modules): licence unclear: 'Public Domain' is not an "
        "SPDX expression (found license 'Public Domain'); read its licence file "
        "(/n/@prove-identity/prove-api/LICENSE) and add a [[clarified]] entry to tools/licences.toml"
    )


def test_an_unclear_licence_passes_with_a_clarified_entry_for_its_version_only() -> None:
    rules = policy(clarified={("python", "click"): Clarified(frozenset({"8.1.8"}), "BSD-3-Clause", "read")})

    read = judge(python("click", "8.1.8", classifiers=("BSD License",)), "tools", rules)
    upgraded = judge(python("click", "8.2.0", classifiers=("BSD License",)), "tools", rules)

    assert read.ok
    assert read.licence == "BSD-3-Clause"
    assert not upgraded.ok
    assert upgraded.refusal is not None
    assert "click 8.2.0 (python, in .venv): licence unclear" in upgraded.refusal
    assert "was read at 8.1.8; read this version's licence file" in upgraded.refusal


def test_a_clarified_licence_is_judged_like_any_other() -> None:
    rules = policy(
        clarified={("python", "yattag"): Clarified(frozenset({"1.16.1"}), "LGPL-2.1-only", "read")}
    )

    lgpl = "GNU Library or Lesser General Public License (LGPL)"
    verdict = judge(python("yattag", "1.16.1", classifiers=(lgpl,)), "tools", rules)

    assert verdict.refusal is not None
    assert "LGPL-2.1-only is not allowed in 'tools'" in verdict.refusal


def test_a_package_allowed_by_name_passes_in_its_scope_only_and_under_its_licence_only() -> None:
    rules = policy(
        allowed={("npm", "iam-simulate"): Allowed("AGPL-3.0-or-later", frozenset({"tools"}), "dev")}
    )

    assert judge(npm("AGPL-3.0-or-later", name="iam-simulate"), "tools", rules).ok
    assert not judge(npm("AGPL-3.0-or-later", name="iam-simulate"), "layer", rules).ok
    assert not judge(npm("SSPL-1.0", name="iam-simulate"), "tools", rules).ok
    assert not judge(npm("AGPL-3.0-or-later", name="another"), "tools", rules).ok


# --- the allow-list itself -------------------------------------------------------------------------


def test_the_allow_list_refuses_non_commercial_no_derivatives_and_strong_copyleft_everywhere() -> None:
    rules = load_policy()

    for scope, licences in rules.scopes.items():
        assert not permitted("CC-BY-NC-ND-4.0", licences), scope
        assert not permitted("CC-BY-NC-4.0", licences), scope
        assert not permitted("AGPL-3.0-or-later", licences), scope
        assert not permitted("GPL-3.0-only", licences), scope


def test_the_layer_ships_permissive_licences_only() -> None:
    rules = load_policy()

    assert rules.scopes["layer"] <= rules.scopes["tools"]
    assert {"MPL-2.0", "EPL-2.0", "LGPL-2.1-only"} & rules.scopes["layer"] == set()
    assert [key for key, entry in rules.allowed.items() if "layer" in entry.scopes] == []


def test_the_allow_list_refuses_a_licence_spelled_otherwise_than_spdx(tmp_path: Path) -> None:
    written = tmp_path / "licences.toml"
    written.write_text('[scopes.tools]\nlicences = ["MIT", "Apache 2.0"]\n')

    with pytest.raises(
        ValueError, match=r"\[scopes.tools\] names what is no SPDX id as SPDX spells it: \['Apache 2.0'\]"
    ):
        load_policy(written)


def test_an_entry_without_a_reason_is_refused(tmp_path: Path) -> None:
    written = tmp_path / "licences.toml"
    written.write_text(
        '[scopes.tools]\nlicences = ["MIT"]\n[[clarified]]\necosystem = "python"\nname = "click"\n'
        'versions = ["8.1.8"]\nlicence = "BSD-3-Clause"\nreason = ""\n'
    )

    with pytest.raises(ValueError, match=r"\[\[clarified\]\] click: say why"):
        load_policy(written)
