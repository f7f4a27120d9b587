"""docs/operations.md documents every parameter of template.yaml: its parameter table lists each one,
with the template's default, and nothing the template does not declare."""

from __future__ import annotations

import re

from phoneid_dev.template import ROOT, template

# A table row whose first cell is one backticked name: | `Tier` | `sandbox` | ... |
_ROW = re.compile(r"^\|\s*`(?P<name>[A-Za-z0-9]+)`\s*\|\s*(?P<default>[^|]*?)\s*\|")


def _parameter_table() -> dict[str, str]:
    """The rows of the table under the ``## Parameters`` heading: name -> the Default cell."""
    document = (ROOT / "docs" / "operations.md").read_text()
    start = document.index("\n## Parameters\n")
    following = document.find("\n## ", start + 1)
    section = document[start : following if following != -1 else len(document)]
    rows = {}
    for line in section.splitlines():
        found = _ROW.match(line)
        if found:
            rows[found["name"]] = found["default"]
    return rows


def _documented_default(value: str) -> str:
    """The template's default as the table writes it: `value` in backticks, "empty" for ""."""
    return f"`{value}`" if value else "empty"


def test_every_template_parameter_is_in_the_operations_parameter_table() -> None:
    # Given the template's parameters and the rows of the doc's parameter table
    declared = set(template().document["Parameters"])
    documented = _parameter_table()

    # Then every parameter has a row, and every row is a parameter of the template
    assert declared - set(documented) == set(), "parameters missing from docs/operations.md"
    assert set(documented) - declared == set(), "docs/operations.md lists parameters the template lacks"


def test_the_operations_parameter_table_states_each_default() -> None:
    # Given the template's defaults and the doc's parameter table
    defaults = template().parameter_defaults()
    documented = _parameter_table()

    # Then each row's Default cell is the template's default
    for name, default in defaults.items():
        assert documented.get(name) == _documented_default(default), name
