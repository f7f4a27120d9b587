"""What a package's metadata says its licence is, as an SPDX expression, and whether its scope allows
it (tools/licences.toml)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "tools" / "licences.toml"
POLICY_NAME = "tools/licences.toml"
ADR = "docs/adr/0113-the-licences-dependencies-may-carry.md"
UNKNOWN = "UNKNOWN"

# Trove classifiers that name one licence, and its version, without doubt. "BSD License" (2 or 3
# clauses?), "Apache Software License" (which version?) and the GPL family without a version name
# several; they are not here, so such a package needs a [[clarified]] entry.
CLASSIFIERS = {
    "MIT License": "MIT",
    "MIT No Attribution License (MIT-0)": "MIT-0",
    "ISC License (ISCL)": "ISC",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "Python Software Foundation License": "PSF-2.0",
    "The Unlicense (Unlicense)": "Unlicense",
    "Zero-Clause BSD (0BSD)": "0BSD",
    "Eclipse Public License 2.0 (EPL-2.0)": "EPL-2.0",
    "CC0 1.0 Universal (CC0 1.0) Public Domain Dedication": "CC0-1.0",
}
# Free names seen in ``License:`` fields, lower-cased, that name one licence without doubt.
NAMES = {
    "mit license": "MIT",
    "mit licence": "MIT",
    "apache 2": "Apache-2.0",
    "apache 2.0": "Apache-2.0",
    "apache license 2.0": "Apache-2.0",
    "apache license, version 2.0": "Apache-2.0",
    "apache license version 2.0": "Apache-2.0",
    "apache software license 2.0": "Apache-2.0",
    "mozilla public license 2.0 (mpl 2.0)": "MPL-2.0",
}


@dataclass(frozen=True)
class Package:
    """One installed package as a tool reported it."""

    ecosystem: str  # "python" or "npm"
    name: str
    version: str
    where: str  # the environment it was found in: ".venv", "node_modules", the layer…
    expression: str | None = None  # Python's License-Expression; npm's license field, as reported
    declared: str | None = None  # Python's License: field
    classifiers: tuple[str, ...] = ()
    licence_file: str | None = None  # the licence text's file, where the tool found one

    @property
    def key(self) -> tuple[str, str]:
        return self.ecosystem, canonical(self.ecosystem, self.name)

    def reported(self) -> str:
        """What its metadata says, as the tool reported it, for a message."""
        said = [
            f"{label} {value!r}"
            for label, value in (
                ("License-Expression" if self.ecosystem == "python" else "license", self.expression),
                ("License", _shortened(self.declared)),
                ("classifiers", "; ".join(self.classifiers) or None),
            )
            if value
        ]
        return ", ".join(said) or "no licence at all"


@dataclass(frozen=True)
class Licence:
    """A licence read without doubt: an SPDX expression."""

    expression: str


@dataclass(frozen=True)
class Unclear:
    """Metadata that does not name one licence: why."""

    why: str


@dataclass(frozen=True)
class Clarified:
    versions: frozenset[str]
    licence: str
    reason: str


@dataclass(frozen=True)
class Allowed:
    licence: str
    scopes: frozenset[str]
    reason: str


@dataclass(frozen=True)
class Policy:
    scopes: dict[str, frozenset[str]]
    clarified: dict[tuple[str, str], Clarified] = field(default_factory=dict)
    allowed: dict[tuple[str, str], Allowed] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    package: Package
    licence: str | None  # the SPDX expression judged, where there was one
    refusal: str | None  # None: allowed

    @property
    def ok(self) -> bool:
        return self.refusal is None


def canonical(ecosystem: str, name: str) -> str:
    return str(canonicalize_name(name)) if ecosystem == "python" else name.lower()


def _shortened(text: str | None) -> str | None:
    if text is None or len(text) <= 80:
        return text
    return text[:77].replace("\n", " ") + "..."


# --- SPDX expressions ------------------------------------------------------------------------------


def spdx(text: str) -> str | None:
    """``text`` as a canonical SPDX expression (ids as SPDX spells them), or None where it is none."""
    try:
        return str(canonicalize_license_expression(text))
    except InvalidLicenseExpression:
        return None


def _tokens(expression: str) -> list[str]:
    return re.findall(r"\(|\)|[^\s()]+", expression)


def permitted(expression: str, licences: frozenset[str]) -> bool:
    """Whether the SPDX ``expression`` is allowed by ``licences``: every ``AND`` operand allowed, one
    ``OR`` alternative enough; ``X WITH exception`` is judged as ``X`` (an exception only grants more)."""
    tokens = _tokens(expression)
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        token = tokens[position]
        position += 1
        return token

    def alternatives() -> bool:
        result = conjunction()
        while peek() == "OR":
            take()
            result = conjunction() or result
        return result

    def conjunction() -> bool:
        result = operand()
        while peek() == "AND":
            take()
            result = operand() and result
        return result

    def operand() -> bool:
        token = take()
        if token == "(":
            result = alternatives()
            if take() != ")":
                raise ValueError(f"unbalanced parentheses in {expression!r}")
        else:
            result = token in licences
        if peek() == "WITH":
            take()
            take()
        return result

    result = alternatives()
    if position != len(tokens):
        raise ValueError(f"cannot read {expression!r}")
    return result


# --- reading a package's metadata ------------------------------------------------------------------


def normalise(package: Package) -> Licence | Unclear:
    """The one licence ``package``'s metadata names, as SPDX, or why it names none for certain."""
    if package.ecosystem == "npm":
        return _normalise_npm(package.expression)
    if package.expression and package.expression != UNKNOWN:
        found = spdx(package.expression)
        if found is None:
            return Unclear(f"its License-Expression {package.expression!r} is not an SPDX expression")
        return Licence(found)
    declared = (package.declared or "").strip()
    if declared and declared != UNKNOWN:
        if "\n" in declared or len(declared) > 100:
            pass  # the whole licence text: its classifiers name it, or nothing does
        elif (found := spdx(declared) or NAMES.get(declared.lower())) is not None:
            return Licence(found)
    return _from_classifiers(package.classifiers, declared)


def _from_classifiers(classifiers: Sequence[str], declared: str) -> Licence | Unclear:
    named = [each for each in classifiers if each not in ("", UNKNOWN)]
    if not named:
        if declared and declared != UNKNOWN:
            return Unclear(f"its License field {_shortened(declared)!r} names no licence SPDX knows")
        return Unclear("its metadata names no licence")
    vague = [each for each in named if each not in CLASSIFIERS]
    if vague:
        return Unclear(f"the classifier {vague[0]!r} does not say which licence (version or variant)")
    ids = sorted({CLASSIFIERS[each] for each in named})
    if len(ids) > 1:
        return Unclear(
            f"its classifiers name {' and '.join(ids)}, without saying whether both apply or either"
        )
    return Licence(ids[0])


def _normalise_npm(reported: str | None) -> Licence | Unclear:
    if not reported or reported == UNKNOWN:
        return Unclear("its package.json names no licence")
    if reported.endswith("*"):
        return Unclear(
            f"its package.json names no licence; license-checker guessed {reported!r} from its files"
        )
    found = spdx(reported)
    if found is None:
        # "Public Domain", "Custom: …", or another name license-checker read from the licence file
        return Unclear(f"{reported!r} is not an SPDX expression")
    return Licence(found)


# --- the verdict -----------------------------------------------------------------------------------


def judge(package: Package, scope: str, policy: Policy) -> Verdict:
    """``package`` against ``scope``'s allow-list: allowed, or refused saying what to do."""
    what = f"{package.name} {package.version} ({package.ecosystem}, in {package.where})"
    reading = normalise(package)
    if isinstance(reading, Licence):
        licence = reading.expression
    else:
        clarified = policy.clarified.get(package.key)
        if clarified is None:
            return Verdict(
                package,
                None,
                f"{what}: licence unclear: {reading.why} (found {package.reported()}); read its licence "
                f"file{_file(package)} and add a [[clarified]] entry to {POLICY_NAME}: the licence it "
                "states (SPDX), the versions read and why",
            )
        if package.version not in clarified.versions:
            read = ", ".join(sorted(clarified.versions))
            return Verdict(
                package,
                None,
                f"{what}: licence unclear ({reading.why}), and its [[clarified]] entry in {POLICY_NAME} "
                f"was read at {read}; read this version's licence file{_file(package)} and add the "
                "version to the entry's versions (and change its licence, if this version's differs)",
            )
        licence = clarified.licence
    licences = policy.scopes[scope]
    if permitted(licence, licences):
        return Verdict(package, licence, None)
    allowed = policy.allowed.get(package.key)
    if allowed is not None and allowed.licence == licence and scope in allowed.scopes:
        return Verdict(package, licence, None)
    return Verdict(
        package,
        licence,
        f"{what}: {licence} is not allowed in {scope!r} ({POLICY_NAME}); drop or replace the dependency, "
        f"or, where the licence is open source and the use fits {ADR}, allow it there with a reason",
    )


def _file(package: Package) -> str:
    return f" ({package.licence_file})" if package.licence_file else ""


def load_policy(path: Path = POLICY) -> Policy:
    data = tomllib.loads(path.read_text())
    scopes = {name: frozenset(scope["licences"]) for name, scope in data["scopes"].items()}
    for name, licences in scopes.items():
        wrong = sorted(each for each in licences if spdx(each) != each)
        if wrong:
            raise ValueError(
                f"{path.name}: [scopes.{name}] names what is no SPDX id as SPDX spells it: {wrong}"
            )
    clarified = {}
    for entry in data.get("clarified", []):
        _check_entry(path, "clarified", entry)
        key = (entry["ecosystem"], canonical(entry["ecosystem"], entry["name"]))
        clarified[key] = Clarified(frozenset(entry["versions"]), entry["licence"], entry["reason"])
    allowed = {}
    for entry in data.get("allowed", []):
        _check_entry(path, "allowed", entry)
        unknown = set(entry["scopes"]) - set(scopes)
        if unknown:
            raise ValueError(
                f"{path.name}: [[allowed]] {entry['name']} names no such scope: {sorted(unknown)}"
            )
        key = (entry["ecosystem"], canonical(entry["ecosystem"], entry["name"]))
        allowed[key] = Allowed(entry["licence"], frozenset(entry["scopes"]), entry["reason"])
    return Policy(scopes, clarified, allowed)


def _check_entry(path: Path, table: str, entry: dict[str, object]) -> None:
    name = entry.get("name")
    if entry.get("ecosystem") not in ("python", "npm"):
        raise ValueError(f"{path.name}: [[{table}]] {name}: ecosystem must be 'python' or 'npm'")
    licence = str(entry.get("licence"))
    if spdx(licence) != licence:
        raise ValueError(
            f"{path.name}: [[{table}]] {name}: {licence!r} is not an SPDX expression as SPDX spells it"
        )
    if not str(entry.get("reason", "")).strip():
        raise ValueError(f"{path.name}: [[{table}]] {name}: say why (reason)")
