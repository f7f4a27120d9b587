"""The output, error and rejected files' records, as CSV lines (docs/connect.md#writing-the-files):
``csv.writer`` with minimal quoting and CRLF line ends, every cell neutralised against formula
injection."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from phoneid.domain.connect.rejection import FileRejected
from phoneid.domain.connect.rows import DetailRow
from phoneid.domain.evaluation import Category, Evaluation

OUTPUT_COLUMNS = (
    "Record Type",
    "Phone Number",
    "First Name",
    "Last Name",
    "Client Customer ID",
    "Attribute Type",
    "Issuer ID",
    "Attribute Value",
    "Assurance Level",
    "Assurance Level Reason Codes",
    "Service Phone Alias",
    "ServiceID",
    "Error",
    "Error Message",
    "GFP Authentication Result",
    "GFP Risk Result",
)
ERROR_COLUMNS = (
    "Record Type",
    "Phone Number",
    "First Name",
    "Last Name",
    "Client Customer ID",
    "Error Attribution",
)

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?[0-9 ().-]+")


def neutralise(cell: str) -> str:
    """A cell a spreadsheet will not run as a formula (docs/connect.md#writing-the-files)."""
    if cell.startswith(_FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


class CsvLines:
    """CSV lines (CRLF-terminated) of neutralised cells, one at a time, with one reusable buffer."""

    def __init__(self) -> None:
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, lineterminator="\r\n")

    def line(self, cells: Iterable[str]) -> str:
        self._buffer.seek(0)
        self._buffer.truncate()
        self._writer.writerow([neutralise(cell) for cell in cells])
        return self._buffer.getvalue()


def gfp_result(evaluation: Evaluation, category: Category) -> str:
    """``pass``, ``fail:9135;9137``, or "" when the policy did not evaluate the category."""
    if category not in evaluation.results:
        return ""
    codes = evaluation.results[category]
    return "fail:" + ";".join(str(code) for code in codes) if codes else "pass"


@dataclass(frozen=True)
class RowOutcome:
    """What verifying one row gave: its output columns, and what the statistics count."""

    line: int
    cells: tuple[str, ...]  # OUTPUT_COLUMNS
    passed: bool = False
    enrolled: bool = False
    reasons: tuple[int, ...] = ()  # evaluation codes of a row that did not pass
    error: str | None = None  # the API error code when the verification could not run

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"line": self.line, "cells": list(self.cells)}
        if self.passed:
            data["passed"] = True
        if self.enrolled:
            data["enrolled"] = True
        if self.reasons:
            data["reasons"] = list(self.reasons)
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RowOutcome:
        return cls(
            line=int(data["line"]),
            cells=tuple(str(cell) for cell in data["cells"]),
            passed=bool(data.get("passed", False)),
            enrolled=bool(data.get("enrolled", False)),
            reasons=tuple(int(code) for code in data.get("reasons", ())),
            error=str(data["error"]) if data.get("error") is not None else None,
        )


def _echo(row: DetailRow) -> list[str]:
    return [
        "D",
        row.phone_number,
        row.first_name,
        row.last_name,
        row.client_customer_id,
        row.attribute_type,
        row.issuer_id,
        row.attribute_value,
    ]


def verified_outcome(
    row: DetailRow,
    *,
    passed: bool,
    evaluation: Evaluation,
    assurance_level: str,
    assurance_reasons: Sequence[str],
    phone_alias: str,
    service_id: str | None,
) -> RowOutcome:
    cells = [
        *_echo(row),
        assurance_level,
        ";".join(assurance_reasons),
        phone_alias,
        service_id or "",
        "",
        "",
        gfp_result(evaluation, Category.AUTHENTICATION),
        gfp_result(evaluation, Category.RISK),
    ]
    return RowOutcome(
        line=row.line,
        cells=tuple(cells),
        passed=passed,
        enrolled=service_id is not None,
        reasons=() if passed else tuple(sorted(evaluation.codes)),
    )


def error_outcome(row: DetailRow, code: str, message: str) -> RowOutcome:
    """A row the verification could not run for: its error in the output, the result columns empty."""
    cells = [*_echo(row), "", "", "", "", code, message, "", ""]
    return RowOutcome(line=row.line, cells=tuple(cells), error=code)


def header_record() -> list[str]:
    return ["H"]


def error_header_record(verification_type: str) -> list[str]:
    return ["H", verification_type]


def trailer_record(count: int) -> list[str]:
    return ["T", str(count)]


def error_record(row: DetailRow, code: str) -> list[str]:
    return ["D", row.phone_number, row.first_name, row.last_name, row.client_customer_id, code]


def rejected_file(file_name: str, rejected: FileRejected) -> str:
    """The short explanation written beside a rejected file, as name-value CSV rows."""
    lines = CsvLines()
    records = [
        ["File", file_name],
        ["Reason Code", rejected.reason.value],
        ["Reason", rejected.message],
    ]
    if rejected.line is not None:
        records.append(["Line", str(rejected.line)])
    return "".join(lines.line(record) for record in records)
