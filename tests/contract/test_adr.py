"""docs/adr: every decision record has its fields and a number of its own, the index lists each record
as it is, supersessions name each other, and every reference to a record, or to a heading of a
document of docs/, resolves to a file and a heading (docs/adr/0085-decisions-as-numbered-records.md)."""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ADR = DOCS / "adr"

_NAME = re.compile(r"^(?P<number>[0-9]{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$")
_FIELD = re.compile(r"^- (?P<field>Status|Date|Area|Supersedes): (?P<value>.+)$", re.MULTILINE)
_LINK = re.compile(r"^\[(?P<number>[0-9]{4})\]\((?P<file>[0-9]{4}-[a-z0-9-]+\.md)\)$")
_PARTS = ("## Context", "## Decision", "## Consequences")

# Where references are looked for: the repository's own text, not what tools put beside it
_SKIPPED_DIRECTORIES = {"node_modules", "__pycache__"}
_TEXT_SUFFIXES = {".md", ".py", ".js", ".mjs", ".html", ".yaml", ".yml", ".json", ".toml", ".txt", ".cfg"}
# A document of docs/ (or a record of docs/adr/) named by its path in any text, with an optional #anchor
_PATH_REFERENCE = re.compile(r"(?<![\w./-])docs/(?P<path>(?:adr/)?[\w.-]+\.md)(?:#(?P<anchor>[\w-]+))?")
# A Markdown link's target: [text](target)
_MARKDOWN_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Record:
    path: Path
    number: str
    title: str
    status: str
    date: str
    area: str
    supersedes: str | None
    text: str


def _records() -> list[Record]:
    records = []
    for path in sorted(ADR.glob("*.md")):
        if path.name == "README.md":
            continue
        named = _NAME.match(path.name)
        assert named, f"{path.name}: a record is named NNNN-short-title.md"
        text = path.read_text()
        head = text.split("\n## ", 1)[0]
        fields: dict[str, str] = {}
        for found in _FIELD.finditer(head):
            assert found["field"] not in fields, f"{path.name}: {found['field']} given twice"
            fields[found["field"]] = found["value"].strip()
        missing = {"Status", "Date", "Area"} - set(fields)
        assert not missing, f"{path.name}: missing {sorted(missing)}"
        first = text.splitlines()[0]
        assert first.startswith("# "), f"{path.name}: the first line is '# Title'"
        assert first[2:].strip(), f"{path.name}: the title is empty"
        records.append(
            Record(
                path=path,
                number=named["number"],
                title=first[2:].strip(),
                status=fields["Status"],
                date=fields["Date"],
                area=fields["Area"],
                supersedes=fields.get("Supersedes"),
                text=text,
            )
        )
    return records


def _linked(value: str, record: Record, what: str) -> str:
    """The number a ``[NNNN](NNNN-title.md)`` field names, checked to be an existing record."""
    found = _LINK.match(value)
    assert found, f"{record.path.name}: {what} is [NNNN](NNNN-title.md), not {value!r}"
    assert found["file"].startswith(found["number"] + "-"), f"{record.path.name}: {value} names two records"
    assert (ADR / found["file"]).is_file(), f"{record.path.name}: {found['file']} does not exist"
    return found["number"]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(document: Path) -> set[str]:
    """Every heading's anchor in a Markdown document (fenced code left out; repeats numbered)."""
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in document.read_text().splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        heading = re.match(r"^#{1,6} (.+?)\s*#*\s*$", line)
        if fenced or heading is None:
            continue
        base = slug(heading[1])
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _text_files() -> list[Path]:
    files = []
    for directory, subdirectories, names in os.walk(ROOT):
        subdirectories[:] = [
            d for d in subdirectories if not d.startswith(".") and d not in _SKIPPED_DIRECTORIES
        ]
        for name in names:
            path = Path(directory) / name
            if path.suffix in _TEXT_SUFFIXES or name == "Makefile":
                files.append(path)
    return files


def _references() -> list[tuple[Path, Path, str | None]]:
    """(where, the document named, its anchor or None) for every reference into docs/ this test holds."""
    found = []
    for path in _text_files():
        text = path.read_text(errors="replace")
        for reference in _PATH_REFERENCE.finditer(text):
            if reference["path"].startswith("adr/") or reference["anchor"]:
                found.append((path, DOCS / reference["path"], reference["anchor"]))
        if path.suffix != ".md":
            continue
        for link in _MARKDOWN_LINK.finditer(text):
            target = link["target"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            document = (path.parent / file).resolve() if file else path
            if document.suffix == ".md" and DOCS in document.parents:
                found.append((path, document, anchor or None))
    return found


def test_every_record_has_its_fields_and_parts() -> None:
    # Given every record of docs/adr
    records = _records()
    assert records, "no records in docs/adr"

    for record in records:
        # Then its status is accepted or names the record that replaced it, its date is a real day
        # and its area is named, and it has the three parts of a record, in order, none empty
        if record.status != "accepted":
            assert record.status.startswith("superseded by "), f"{record.path.name}: status {record.status!r}"
            _linked(record.status.removeprefix("superseded by "), record, "Status")
        assert datetime.date.fromisoformat(record.date) <= datetime.date.today(), record.path.name
        assert record.area, record.path.name
        positions = [record.text.find(f"\n{part}\n") for part in _PARTS]
        assert -1 not in positions, f"{record.path.name}: needs {', '.join(_PARTS)}"
        assert positions == sorted(positions), f"{record.path.name}: parts out of order"
        bodies = re.split(r"\n## (?:Context|Decision|Consequences)\n", record.text)[1:]
        assert all(body.strip() for body in bodies), f"{record.path.name}: an empty part"


def test_every_record_has_a_number_of_its_own_and_none_is_skipped() -> None:
    numbers = [record.number for record in _records()]

    assert len(numbers) == len(set(numbers)), "two records share a number"
    assert numbers == [f"{n:04d}" for n in range(1, len(numbers) + 1)], (
        "numbers run 0001, 0002, ... with no gap"
    )


def test_a_superseded_record_and_the_one_replacing_it_name_each_other() -> None:
    records = {record.number: record for record in _records()}

    superseded_by = {
        number: _linked(record.status.removeprefix("superseded by "), record, "Status")
        for number, record in records.items()
        if record.status != "accepted"
    }
    supersedes = {
        number: _linked(record.supersedes, record, "Supersedes")
        for number, record in records.items()
        if record.supersedes is not None
    }

    assert {old: new for new, old in supersedes.items()} == superseded_by
    for old, new in superseded_by.items():
        assert int(new) > int(old), f"{old} is superseded by an older record, {new}"
        assert records[new].date >= records[old].date, f"{new} is dated before the record it replaces"


def test_the_index_lists_every_record_with_its_title_status_and_date() -> None:
    # Given the rows of the index: | NNNN | [Title](NNNN-title.md) | status | date |
    index = (ADR / "README.md").read_text()
    rows = re.findall(
        r"^\| ([0-9]{4}) \| \[(.+?)\]\(([0-9]{4}-[a-z0-9-]+\.md)\) \| (.+?) \| ([0-9-]{10}) \|$",
        index,
        re.MULTILINE,
    )
    listed = [row[2] for row in rows]

    # Then each record is listed once, as it is
    records = _records()
    assert sorted(listed) == [record.path.name for record in records], "the index and the records differ"
    by_file = {row[2]: row for row in rows}
    for record in records:
        number, title, _, status, date = by_file[record.path.name]
        assert (number, title, status, date) == (record.number, record.title, record.status, record.date)
    # And each area has its own table, under a heading naming it
    for record in records:
        area = index.split(f"\n### {record.area}\n", 1)
        assert len(area) == 2, f"the index has no area {record.area!r}"
        assert f"]({record.path.name})" in area[1].split("\n### ", 1)[0], (
            f"{record.path.name} not under its area"
        )


def test_every_reference_to_a_record_or_a_heading_of_docs_resolves() -> None:
    # Given every path of a record, every anchored path into docs/, and every Markdown link into docs/
    references = _references()
    assert any(document.parent == ADR for _, document, _ in references)

    broken = []
    for where, document, anchor in references:
        shown = f"{where.relative_to(ROOT)} → {document.relative_to(ROOT)}{'#' + anchor if anchor else ''}"
        if not document.is_file():
            broken.append(f"{shown}: no such file")
        elif anchor is not None and anchor not in anchors(document):
            broken.append(f"{shown}: no such heading")

    # Then each names an existing file and, where it names one, an existing heading
    assert broken == []


def test_slugs_are_the_anchors_github_makes() -> None:
    assert slug("`POST /v3/start`") == "post-v3start"
    assert slug("API Gateway's own refusals") == "api-gateways-own-refusals"
    assert (
        slug("Names: `serviceId`, not `proveId` or `identityId`")
        == "names-serviceid-not-proveid-or-identityid"
    )
    assert slug("KYC Match: 9004, 9005, 9168, 9180 and 9181") == "kyc-match-9004-9005-9168-9180-and-9181"


def test_no_markdown_link_climbs_out_of_its_directory() -> None:
    """A link with ``..`` leaves the page's folder, and a reader or checker resolving it from the
    repository's root leaves the repository: a record names another document by its path from the
    root (``docs/api.md#limits``), which the reference check above resolves."""
    climbing = [
        f"{path.relative_to(ROOT)}: {link['target']}"
        for path in _text_files()
        if path.suffix == ".md"
        for link in _MARKDOWN_LINK.finditer(path.read_text(errors="replace"))
        if link["target"].startswith("../") or "/../" in link["target"]
    ]

    assert climbing == []
