"""Loading the identity table from JSON Lines or CSV: all or nothing unless told to skip bad records."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from phoneid.domain.identity import Address
from phoneid.services.identities import CSV_COLUMNS, IdentityImport
from tests.fakes import InMemoryIdentityStore
from tests.unit.helpers import identity_record


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def csv_text(*rows: dict[str, str]) -> str:
    lines = [",".join(CSV_COLUMNS)]
    lines += [",".join(row.get(column, "") for column in CSV_COLUMNS) for row in rows]
    return "\n".join(lines) + "\n"


def csv_row(phone: str = "+12025550142", **fields: str) -> dict[str, str]:
    values = {
        "phoneNumber": phone,
        "firstName": "Noor",
        "lastName": "Haddad",
        "dob": "1987-06-15",
        "ssn": "123456789",
        "address": "42 Quarry Road",
        "city": "Albany",
        "region": "NY",
        "postalCode": "12207",
        "emailAddress": "noor.haddad@example.com",
    }
    values.update(fields)
    return values


def test_json_lines_are_imported_as_identities() -> None:
    # Given a JSON Lines file of two valid identities, one with a national-format number
    store = InMemoryIdentityStore()
    text = jsonl(
        identity_record(), identity_record("(202) 555-0143", firstName="Sam", reputationReasons=[9176])
    )

    # When imported on the US stack
    report = IdentityImport(store, "US").run(text, "jsonl")

    # Then both are stored under their E.164 number, SSNs as digits
    assert (report.imported, report.rejected) == (2, [])
    noor = store.find("+12025550142")
    assert noor is not None
    assert noor.ssn == "123456789"
    assert noor.addresses == (Address("42 Quarry Road", "Albany", "NY", "12207"),)
    sam = store.find("+12025550143")
    assert sam is not None
    assert (sam.first_name, sam.reputation_reasons) == ("Sam", (9176,))


def test_csv_rows_are_imported_as_identities() -> None:
    # Given a CSV file of two rows, one without address or email
    store = InMemoryIdentityStore()
    bare = {"address": "", "city": "", "region": "", "postalCode": "", "emailAddress": ""}
    text = csv_text(csv_row(), csv_row("+12025550143", **bare))

    # When imported
    report = IdentityImport(store, "US").run(text, "csv")

    # Then both are stored; the bare row has no addresses or emails
    assert (report.imported, report.rejected) == (2, [])
    noor = store.find("+12025550142")
    assert noor is not None
    assert noor.email_addresses == ("noor.haddad@example.com",)
    bare_identity = store.find("+12025550143")
    assert bare_identity is not None
    assert (bare_identity.addresses, bare_identity.email_addresses) == ((), ())


def test_one_invalid_json_line_means_nothing_is_imported() -> None:
    # Given three lines, the second with an impossible dob and a five-digit SSN
    store = InMemoryIdentityStore()
    bad = identity_record("+12025550143", dob="1987-02-30", ssn="98765")
    text = jsonl(identity_record(), bad, identity_record("+12025550144"))

    # When imported
    report = IdentityImport(store, "US").run(text, "jsonl")

    # Then nothing is stored; the rejection names line 2 and the fields, not their values
    assert report.imported == 0
    assert store.items == {}
    assert report.rejected == [(2, "invalid fields: dob, ssn")]
    assert "98765" not in report.rejected[0][1]
    assert "1987-02-30" not in report.rejected[0][1]


def test_skip_invalid_imports_the_valid_records() -> None:
    # Given three lines, the second invalid
    store = InMemoryIdentityStore()
    text = jsonl(
        identity_record(), identity_record("+12025550143", firstName=""), identity_record("+12025550144")
    )

    # When imported skipping invalid records
    report = IdentityImport(store, "US").run(text, "jsonl", skip_invalid=True)

    # Then the two valid ones are stored and the invalid one reported
    assert report.imported == 2
    assert set(store.items) == {"+12025550142", "+12025550144"}
    assert report.rejected == [(2, "invalid fields: firstName")]


def test_a_line_that_is_not_json_is_rejected_as_a_record() -> None:
    # Given a file whose second line is not JSON (blank lines are skipped but counted)
    store = InMemoryIdentityStore()
    text = jsonl(identity_record()) + "\n" + "{broken\n"

    # When imported
    report = IdentityImport(store, "US").run(text, "jsonl")

    # Then the broken line is rejected by its number
    assert report.rejected == [(3, "invalid fields: record")]
    assert store.items == {}


def test_an_invalid_phone_number_is_rejected_without_its_digits() -> None:
    # Given a record with a number too short to exist
    store = InMemoryIdentityStore()
    text = jsonl(identity_record("+1202555014"))

    # When imported
    report = IdentityImport(store, "US").run(text, "jsonl")

    # Then it is rejected naming phoneNumber, without the digits
    [(line, reason)] = report.rejected
    assert line == 1
    assert reason.startswith("phoneNumber ")
    assert "202555014" not in reason


def test_unknown_fields_and_reason_codes_are_rejected() -> None:
    # Given records with an unknown field and an unknown reputation code
    store = InMemoryIdentityStore()
    text = jsonl(identity_record(nickname="Noo"), identity_record("+12025550143", reputationReasons=[1234]))

    # When imported
    report = IdentityImport(store, "US").run(text, "jsonl")

    # Then both are rejected by name
    assert report.rejected == [(1, "invalid fields: nickname"), (2, "invalid fields: reputationReasons")]


def test_an_invalid_csv_row_names_its_line_and_fields() -> None:
    # Given a CSV whose second data row (line 3) lacks a first name and has month 13
    store = InMemoryIdentityStore()
    text = csv_text(csv_row(), csv_row("+12025550143", firstName="", dob="1990-13-01"))

    # When imported
    report = IdentityImport(store, "US").run(text, "csv")

    # Then nothing is stored; the rejection names line 3 and the fields only
    assert report.imported == 0
    assert store.items == {}
    assert report.rejected == [(3, "invalid fields: dob, firstName")]


def test_a_csv_without_required_columns_is_refused() -> None:
    # Given a CSV header without the ssn column
    text = "phoneNumber,firstName,lastName,dob\n+12025550142,Noor,Haddad,1987-06-15\n"

    # When imported
    # Then the whole file is refused, naming the missing column
    with pytest.raises(ValueError, match="ssn"):
        IdentityImport(InMemoryIdentityStore(), "US").run(text, "csv")


def test_numbers_of_the_eu_stack_need_a_country_code() -> None:
    # Given an EU import with a national-format Irish number and an E.164 one
    store = InMemoryIdentityStore()
    text = jsonl(identity_record("085 123 4567"), identity_record("+353851234567"))

    # When imported skipping invalid records
    report = IdentityImport(store, "EU").run(text, "jsonl", skip_invalid=True)

    # Then only the E.164 one is stored
    assert report.imported == 1
    assert set(store.items) == {"+353851234567"}
    assert [line for line, _ in report.rejected] == [1]


def test_a_number_of_the_other_regional_stack_is_rejected_by_its_line() -> None:
    # Given an EU import with a US number between two Irish ones
    store = InMemoryIdentityStore()
    text = jsonl(identity_record("+353851234567"), identity_record(), identity_record("+353851234568"))

    # When imported
    report = IdentityImport(store, "EU").run(text, "jsonl")

    # Then nothing is stored; line 2 says which stack serves it, with the number masked
    assert report.imported == 0
    assert store.items == {}
    assert report.rejected == [(2, "phoneNumber US:***42 is served by the US stack, not this EU stack")]


def test_a_european_number_is_rejected_by_the_us_stack() -> None:
    # Given a US import of a UK number and a US one, skipping invalid records
    store = InMemoryIdentityStore()
    text = csv_text(csv_row("+447400123456"), csv_row())

    # When imported
    report = IdentityImport(store, "US").run(text, "csv", skip_invalid=True)

    # Then only the US number is stored; the UK row (line 2) is rejected without its digits
    assert set(store.items) == {"+12025550142"}
    assert report.rejected == [(2, "phoneNumber GB:***56 is served by the EU stack, not this US stack")]
    assert "7400123" not in report.rejected[0][1]


@pytest.mark.parametrize(
    ("records", "summary"),
    [
        ([identity_record("+353851234567")], "imported 1 identity, rejected 0"),
        (
            [identity_record("+353851234567"), identity_record("+353851234568")],
            "imported 2 identities, rejected 0",
        ),
        ([identity_record("+353851234567"), identity_record()], "imported 1 identity, rejected 1"),
    ],
)
def test_the_cli_counts_identities_in_words(
    records: list[dict[str, Any]],
    summary: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given an EU stack (its import, in memory) and a file of records
    from phoneid_cli.main import main
    from phoneid_cli.targets import Context

    imports = IdentityImport(InMemoryIdentityStore(), "EU")

    class EuStack(Context):
        def services(self, args: Any) -> Any:
            return SimpleNamespace(identity_import=imports)

    path = tmp_path / "people.jsonl"
    path.write_text(jsonl(*records))

    # When the operator imports it, skipping invalid records
    code = main(["identities", "import", str(path), "--skip-invalid"], EuStack())

    # Then the summary says identity or identities as the count needs; a US number is named by line
    shown = capsys.readouterr()
    assert code == 0
    assert shown.out == summary + "\n"
    if "rejected 1" in summary:
        assert (
            shown.err
            == f"{path}:2: rejected: phoneNumber US:***42 is served by the US stack, not this EU stack\n"
        )
