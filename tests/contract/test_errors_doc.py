"""docs/errors.md names every error code the service can answer, each with every status it comes
with, and no code the service does not have: the API's codes (the error classes of the code base and
API Gateway's own responses in template.yaml), Connect's row codes and its file rejections."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections import defaultdict
from collections.abc import Iterator

import phoneid
from phoneid.domain.connect.rejection import Rejection
from phoneid.domain.connect.rows import RowError
from phoneid.domain.errors import PhoneIdError
from phoneid_dev.template import ROOT, template

ERRORS_DOC = (ROOT / "docs" / "errors.md").read_text()
_CODE_HEADING = re.compile(r"^### (?P<code>\d{4}) ", re.MULTILINE)
_STATUS_LINE = re.compile(r"^- \*\*Status\*\*: (?P<statuses>.*(?:\n  .*)*)", re.MULTILINE)


def _error_classes() -> dict[int, set[int]]:
    """code -> statuses, from every subclass of PhoneIdError in the domain package (each of its
    modules imported first, so that no class is missed; a subclass inherits what it does not set)."""
    for module in pkgutil.walk_packages(phoneid.__path__, "phoneid."):
        importlib.import_module(module.name)

    def with_subclasses(error: type[PhoneIdError]) -> Iterator[type[PhoneIdError]]:
        yield error
        for subclass in error.__subclasses__():
            yield from with_subclasses(subclass)

    answered: dict[int, set[int]] = defaultdict(set)
    for error in with_subclasses(PhoneIdError):
        if error.__module__.startswith("phoneid."):  # not a test's own double
            answered[error.code].add(error.status)
    return answered


def _gateway_responses() -> dict[int, set[int]]:
    """code -> statuses of the gateway responses that set their status (the defaults keep API
    Gateway's own)."""
    answered: dict[int, set[int]] = defaultdict(set)
    for resource in template().document["Resources"].values():
        for response in resource.get("Properties", {}).get("GatewayResponses", {}).values():
            body = json.loads(response["ResponseTemplates"]["application/json"])
            statuses = answered.setdefault(body["code"], set())  # without StatusCode: API Gateway's own
            if "StatusCode" in response:
                statuses.add(int(response["StatusCode"]))
    return answered


def _documented() -> dict[int, set[int]]:
    """code -> the statuses its section's Status line names."""
    headings = list(_CODE_HEADING.finditer(ERRORS_DOC))
    documented = {}
    for heading, following in zip(headings, [*headings[1:], None], strict=True):
        section = ERRORS_DOC[heading.start() : following.start() if following else len(ERRORS_DOC)]
        status_line = _STATUS_LINE.search(section)
        assert status_line is not None, f"{heading['code']} has no Status line"
        documented[int(heading["code"])] = {int(s) for s in re.findall(r"\b[1-5]\d\d\b", status_line[0])}
    return documented


def _table_codes(heading: str) -> list[str]:
    section = ERRORS_DOC.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([A-Z_]+)` \|", section, flags=re.MULTILINE)


def test_every_api_error_code_is_documented_with_each_of_its_statuses() -> None:
    # Given the codes and statuses the code base and the gateway answer, and the doc's sections
    answered: dict[int, set[int]] = defaultdict(set)
    for source in (_error_classes(), _gateway_responses()):
        for code, statuses in source.items():
            answered[code] |= statuses
    documented = _documented()

    # Then each code has its section, and no section names a code the service does not have
    assert sorted(answered) == sorted(documented)
    assert {8000, 8001, 8002, 8003, 8011, 8018, 9100} <= set(answered)
    # And each section's Status line names every status its code comes with
    missing = {code: statuses - documented[code] for code, statuses in answered.items()}
    assert {code: statuses for code, statuses in missing.items() if statuses} == {}


def test_every_connect_row_error_and_file_rejection_is_documented() -> None:
    assert _table_codes("Connect row errors") == [error.value for error in RowError]
    assert sorted(_table_codes("Connect rejected files")) == sorted(
        rejection.value for rejection in Rejection
    )


def test_the_api_error_table_links_each_code_to_its_section() -> None:
    # Given the error table of docs/api.md
    api = (ROOT / "docs" / "api.md").read_text()
    table = api.split("| Code | Name | Status | Cause and action |", 1)[1].split("\n\n", 1)[0]

    # Then each code is a link to its section of docs/errors.md
    codes = re.findall(r"^\| (\S+) \|", table, flags=re.MULTILINE)
    assert codes == [f"[{code}](errors.md#{code}-{_slug(code)})" for code in map(_code, codes)]


def _code(cell: str) -> str:
    return re.sub(r"\D", "", cell.split("]")[0])


def _slug(code: str) -> str:
    heading = next(h for h in ERRORS_DOC.splitlines() if h.startswith(f"### {code} "))
    return re.sub(r"[^a-z0-9 -]", "", heading.removeprefix(f"### {code} ").lower()).replace(" ", "-")
