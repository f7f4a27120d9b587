"""Loading the operator's signal lists: one record shape per kind, all or nothing unless told to
skip bad records, rejections that name lines and fields but never values, SSNs kept only as MACs."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from phoneid.domain.lists import address_keys, name_key
from phoneid.domain.phone import Region
from phoneid.domain.signals import ListEntry, ListKind
from phoneid.services.signal_lists import SignalListImport, record_fields
from tests.fakes import InMemorySignalLists
from tests.unit.helpers import LocalMac

MAC = LocalMac()


def jsonl(*records: Any) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def csv_text(kind: ListKind, *rows: dict[str, str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[f.name for f in record_fields(kind)], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def load(kind: ListKind, text: str, fmt: str = "jsonl", *, region: Region = "US", skip: bool = False) -> Any:
    store = InMemorySignalLists()
    report = SignalListImport(store, MAC, region).run(kind, text, fmt, skip_invalid=skip)
    return store, report


def stored(store: InMemorySignalLists) -> dict[str, dict[str, Any]]:
    return {key: dict(entry.values) for (_, key), entry in store.items.items()}


# --- every kind: a valid file imports ----------------------------------------------------------

VALID: list[tuple[ListKind, list[dict[str, Any]], dict[str, dict[str, Any]]]] = [
    (
        ListKind.PUBLIC_SMS,
        [{"phoneNumber": "+12025550142"}, {"phoneNumber": "(202) 555-0143"}],
        {"+12025550142": {}, "+12025550143": {}},
    ),
    (
        ListKind.LINE_TYPES,
        [{"phoneNumber": "+12025550142", "lineType": "voip-nonfixed"}],
        {"+12025550142": {"lineType": "voip-nonfixed"}},
    ),
    (
        ListKind.SIM_TRUST,
        [{"phoneNumber": "+12025550142", "score": 0}, {"phoneNumber": "+12025550143", "score": "100"}],
        {"+12025550142": {"score": 0}, "+12025550143": {"score": 100}},
    ),
    (
        ListKind.BOT_NUMBERS,
        [{"phoneNumber": "+1 202 555 0142"}],
        {"+12025550142": {}},
    ),
    (
        ListKind.PORT_EVENTS,
        [{"phoneNumber": "+12025550142", "portedAt": "2026-11-21T22:30:00-05:00"}],
        {"+12025550142": {"portedAt": "2026-11-22T03:30:00+00:00"}},
    ),
    (
        ListKind.AML,
        [
            {"firstName": "Viktor", "lastName": "Bout", "dob": "1967-01-13", "listName": "OFAC SDN"},
            {"firstName": "Ana", "lastName": "Núñez"},
        ],
        {"viktor bout|1967-01-13": {"listNames": ["OFAC SDN"]}, "ana nunez": {"listNames": []}},
    ),
    (
        ListKind.CORRECTIONAL_ADDRESSES,
        [
            {"address": "135 State Street", "postalCode": "12207", "facility": "Albany County Jail"},
            {"address": "1 Prison Road, Unit 5", "city": "Attica", "region": "New York"},
        ],
        {
            "135 state st|12207": {"facility": "Albany County Jail"},
            "1 prison rd unit 5|attica|ny": {},
        },
    ),
    (
        ListKind.SSN_ISSUANCE,
        [
            {"areaGroup": "12345", "issuedFrom": "1971-03-01"},
            {"areaGroup": "123-46", "issuedFrom": "1972-01-01", "issuedTo": "1974-12-31"},
        ],
        {
            "12345": {"issuedFrom": "1971-03-01"},
            "12346": {"issuedFrom": "1972-01-01", "issuedTo": "1974-12-31"},
        },
    ),
]


@pytest.mark.parametrize(("kind", "records", "expected"), VALID, ids=[k.value for k, _, _ in VALID])
def test_a_valid_json_lines_file_of_each_kind_is_imported(
    kind: ListKind, records: list[dict[str, Any]], expected: dict[str, dict[str, Any]]
) -> None:
    # Given a JSON Lines file of valid records of the kind
    # When imported
    store, report = load(kind, jsonl(*records))

    # Then every record is stored under its normalised key, with its values
    assert (report.imported, report.entries, report.rejected) == (len(records), len(expected), [])
    assert stored(store) == expected
    assert all(entry.kind == kind for entry in store.items.values())


@pytest.mark.parametrize(("kind", "records", "expected"), VALID, ids=[k.value for k, _, _ in VALID])
def test_a_valid_csv_file_of_each_kind_is_imported(
    kind: ListKind, records: list[dict[str, Any]], expected: dict[str, dict[str, Any]]
) -> None:
    # Given the same records as CSV with the kind's header (absent fields as empty cells)
    rows = [{k: str(v) for k, v in record.items()} for record in records]

    # When imported
    store, report = load(kind, csv_text(kind, *rows), "csv")

    # Then the same entries are stored
    assert (report.imported, report.rejected) == (len(records), [])
    assert stored(store) == expected


def test_a_deceased_record_lists_its_number_and_only_the_mac_of_its_ssn() -> None:
    # Given deceased records with a number, an SSN, and both
    text = jsonl(
        {"phoneNumber": "+12025550142"},
        {"ssn": "123-45-6789"},
        {"phoneNumber": "+12025550143", "ssn": "987654321"},
    )

    # When imported
    store, report = load(ListKind.DECEASED, text)

    # Then numbers are keyed by E.164 and SSNs only by their MAC; no digits of an SSN are stored
    assert (report.imported, report.entries) == (3, 4)
    assert set(stored(store)) == {
        "+12025550142",
        "+12025550143",
        MAC.digest("list-ssn:123456789"),
        MAC.digest("list-ssn:987654321"),
    }
    everything = repr(store.items)
    for digits in ("123456789", "123-45-6789", "987654321", "6789", "4321"):
        assert digits not in everything


def test_a_deceased_csv_with_an_ssn_column_stores_only_macs() -> None:
    # Given a CSV of deceased people, one with only an SSN
    text = csv_text(ListKind.DECEASED, {"phoneNumber": "", "ssn": "123456789"})

    # When imported
    store, report = load(ListKind.DECEASED, text, "csv")

    # Then the SSN is stored as its MAC only
    assert report.rejected == []
    assert set(stored(store)) == {MAC.digest("list-ssn:123456789")}
    assert "123456789" not in repr(store.items)


def test_import_and_lookup_agree_on_spellings() -> None:
    # Given a watch-list person and a correctional address, spelled one way in the file
    lists = InMemorySignalLists()
    importer = SignalListImport(lists, MAC, "US")
    importer.run(ListKind.AML, jsonl({"firstName": "José", "lastName": "O'Neil"}), "jsonl")
    importer.run(
        ListKind.CORRECTIONAL_ADDRESSES,
        jsonl({"address": "135 State St.", "postalCode": "12207-0001"}),
        "jsonl",
    )

    # When looked up with another spelling, with more detail than listed
    aml = lists.lookup(ListKind.AML, name_key("JOSE", "ONeil", "1970-01-01"))
    address = lists.lookup(ListKind.CORRECTIONAL_ADDRESSES, address_keys("135 State Street Apt 2", "12207"))

    # Then both are found
    assert list(aml) == ["jose oneil"]
    assert list(address) == ["135 state st|12207"]


def test_records_under_one_key_merge() -> None:
    # Given one person on two watch lists, and two ports of one number out of order
    aml = jsonl(
        {"firstName": "Ana", "lastName": "Ruiz", "listName": "UN"},
        {"firstName": "ANA", "lastName": "Ruiz", "listName": "EU"},
    )
    ports = jsonl(
        {"phoneNumber": "+12025550142", "portedAt": "2026-11-20T10:00:00Z"},
        {"phoneNumber": "+12025550142", "portedAt": "2026-10-01T10:00:00Z"},
    )

    # When imported
    aml_store, aml_report = load(ListKind.AML, aml)
    port_store, _ = load(ListKind.PORT_EVENTS, ports)

    # Then the person is one entry on both lists, and the latest port counts
    assert (aml_report.imported, aml_report.entries) == (2, 1)
    assert stored(aml_store) == {"ana ruiz": {"listNames": ["EU", "UN"]}}
    assert stored(port_store) == {"+12025550142": {"portedAt": "2026-11-20T10:00:00+00:00"}}


# --- each invalid shape is rejected, naming line and field --------------------------------------

INVALID: list[tuple[ListKind, dict[str, Any], str]] = [
    (ListKind.PUBLIC_SMS, {}, "invalid fields: phoneNumber"),
    (ListKind.PUBLIC_SMS, {"phoneNumber": "+12025550142", "carrier": "x"}, "invalid fields: carrier"),
    (ListKind.PUBLIC_SMS, {"phoneNumber": 12025550142}, "invalid fields: phoneNumber"),
    (ListKind.LINE_TYPES, {"phoneNumber": "+12025550142", "lineType": "voip"}, "invalid fields: lineType"),
    (ListKind.LINE_TYPES, {"phoneNumber": "+12025550142"}, "invalid fields: lineType"),
    (ListKind.SIM_TRUST, {"phoneNumber": "+12025550142", "score": 101}, "invalid fields: score"),
    (ListKind.SIM_TRUST, {"phoneNumber": "+12025550142", "score": -1}, "invalid fields: score"),
    (ListKind.SIM_TRUST, {"phoneNumber": "+12025550142", "score": 42.5}, "invalid fields: score"),
    (ListKind.BOT_NUMBERS, {"phone": "+12025550142"}, "invalid fields: phone, phoneNumber"),
    (
        ListKind.PORT_EVENTS,
        {"phoneNumber": "+12025550142", "portedAt": "2026-11-20"},
        "invalid fields: portedAt",
    ),
    (
        ListKind.PORT_EVENTS,
        {"phoneNumber": "+12025550142", "portedAt": "2026-11-20T10:00:00"},
        "invalid fields: portedAt",
    ),
    (
        ListKind.PORT_EVENTS,
        {"phoneNumber": "+12025550142", "portedAt": 1763632800},
        "invalid fields: portedAt",
    ),
    (ListKind.AML, {"firstName": "Viktor"}, "invalid fields: lastName"),
    (ListKind.AML, {"firstName": "Viktor", "lastName": "Bout", "dob": "1967-13-01"}, "invalid fields: dob"),
    (ListKind.AML, {"firstName": "Viktor", "lastName": "Bout", "dob": "13/01/1967"}, "invalid fields: dob"),
    (ListKind.AML, {"firstName": "", "lastName": "Bout"}, "invalid fields: firstName"),
    (ListKind.CORRECTIONAL_ADDRESSES, {"address": "135 State St"}, "needs postalCode, or city and region"),
    (
        ListKind.CORRECTIONAL_ADDRESSES,
        {"address": "135 State St", "city": "Albany"},
        "needs postalCode, or city and region",
    ),
    (ListKind.CORRECTIONAL_ADDRESSES, {"postalCode": "12207"}, "invalid fields: address"),
    (ListKind.CORRECTIONAL_ADDRESSES, {"address": "...", "postalCode": "12207"}, "invalid fields: address"),
    (ListKind.DECEASED, {}, "needs phoneNumber or ssn"),
    (ListKind.DECEASED, {"ssn": "12-345-6789"}, "invalid fields: ssn"),
    (ListKind.DECEASED, {"ssn": "12345678"}, "invalid fields: ssn"),
    (ListKind.SSN_ISSUANCE, {"areaGroup": "1234", "issuedFrom": "1971-03-01"}, "invalid fields: areaGroup"),
    (ListKind.SSN_ISSUANCE, {"areaGroup": "12345", "issuedFrom": "1971-02-30"}, "invalid fields: issuedFrom"),
    (ListKind.SSN_ISSUANCE, {"areaGroup": "12345"}, "invalid fields: issuedFrom"),
]


@pytest.mark.parametrize(
    ("kind", "record", "reason"), INVALID, ids=[f"{k.value}-{i}" for i, (k, _, _) in enumerate(INVALID)]
)
def test_each_invalid_shape_is_rejected_by_line_and_field(
    kind: ListKind, record: dict[str, Any], reason: str
) -> None:
    # Given a file whose second line is invalid for the kind
    valid = (
        {"phoneNumber": "+12025550199"}
        if kind == ListKind.DECEASED
        else next(records[0] for k, records, _ in VALID if k == kind)
    )
    text = jsonl(valid, record)

    # When imported
    store, report = load(kind, text)

    # Then nothing is stored, and line 2 is rejected naming its fields, never their values
    assert report.imported == 0
    assert store.items == {}
    assert report.rejected == [(2, reason)]
    for value in record.values():
        if len(str(value)) > 2:
            assert str(value) not in reason


def test_an_invalid_number_is_rejected_without_its_digits() -> None:
    # Given a number too short to exist, on a deceased list
    text = jsonl({"phoneNumber": "+1202555014", "ssn": "123456789"})

    # When imported
    store, report = load(ListKind.DECEASED, text)

    # Then it is rejected naming phoneNumber only, and nothing (not even the SSN's MAC) is stored
    [(line, reason)] = report.rejected
    assert line == 1
    assert reason.startswith("phoneNumber ")
    assert "202555014" not in reason
    assert store.items == {}


def test_a_line_that_is_not_a_json_object_is_rejected_as_a_record() -> None:
    # Given a file with a broken line and a line that is a list, around a blank line
    text = jsonl({"phoneNumber": "+12025550142"}) + "\n{broken\n" + '["+12025550143"]\n'

    # When imported
    _, report = load(ListKind.PUBLIC_SMS, text)

    # Then both are rejected by their line numbers
    assert report.rejected == [(3, "invalid fields: record"), (4, "invalid fields: record")]


def test_skip_invalid_imports_the_valid_records() -> None:
    # Given three sim-trust lines, the second out of range
    text = jsonl(
        {"phoneNumber": "+12025550142", "score": 10},
        {"phoneNumber": "+12025550143", "score": 250},
        {"phoneNumber": "+12025550144", "score": 90},
    )

    # When imported skipping invalid records
    store, report = load(ListKind.SIM_TRUST, text, skip=True)

    # Then the valid two are stored and the invalid one reported
    assert (report.imported, report.rejected) == (2, [(2, "invalid fields: score")])
    assert set(stored(store)) == {"+12025550142", "+12025550144"}


def test_an_invalid_csv_row_names_its_line_and_fields() -> None:
    # Given an AML CSV whose second data row (line 3) has no last name and an impossible dob
    text = csv_text(
        ListKind.AML,
        {"firstName": "Viktor", "lastName": "Bout", "dob": "1967-01-13", "listName": "OFAC SDN"},
        {"firstName": "Ana", "lastName": "", "dob": "1990-02-30", "listName": ""},
    )

    # When imported
    store, report = load(ListKind.AML, text, "csv")

    # Then nothing is stored; line 3 is named with its fields
    assert report.rejected == [(3, "invalid fields: dob, lastName")]
    assert store.items == {}


def test_a_csv_header_that_does_not_fit_the_kind_is_refused() -> None:
    # Given CSV headers lacking a required column, or with a column the kind does not have
    lacking = "phoneNumber\n+12025550142\n"
    extra = "phoneNumber,lineType,carrier\n+12025550142,mobile,Acme\n"
    importer = SignalListImport(InMemorySignalLists(), MAC, "US")

    # When imported
    # Then the whole file is refused, naming the columns
    with pytest.raises(ValueError, match="lacks columns: lineType"):
        importer.run(ListKind.LINE_TYPES, lacking, "csv")
    with pytest.raises(ValueError, match="carrier"):
        importer.run(ListKind.LINE_TYPES, extra, "csv")


def test_numbers_of_the_eu_stack_need_a_country_code() -> None:
    # Given an EU import of a national-format Irish number and an E.164 one
    text = jsonl({"phoneNumber": "085 123 4567"}, {"phoneNumber": "+353851234567"})

    # When imported skipping invalid records
    store, report = load(ListKind.BOT_NUMBERS, text, region="EU", skip=True)

    # Then only the E.164 one is stored
    assert set(stored(store)) == {"+353851234567"}
    assert [line for line, _ in report.rejected] == [1]


def test_an_unknown_format_is_refused() -> None:
    # Given a format that is neither jsonl nor csv
    # When imported
    # Then it is refused
    with pytest.raises(ValueError, match="jsonl, csv"):
        SignalListImport(InMemorySignalLists(), MAC, "US").run(ListKind.AML, "", "xml")


def test_every_kind_has_a_record_shape() -> None:
    # Given the kinds of list
    # Then each has fields, and a file of nothing imports nothing
    for kind in ListKind:
        assert record_fields(kind)
        _, report = load(kind, "")
        assert (report.imported, report.entries, report.rejected) == (0, 0, [])


def test_entries_are_list_entries_of_the_port() -> None:
    # Given a valid bot-numbers file
    store, _ = load(ListKind.BOT_NUMBERS, jsonl({"phoneNumber": "+12025550142"}))

    # Then what reached the port is a ListEntry of the kind, keyed by E.164
    assert store.lookup(ListKind.BOT_NUMBERS, ["+12025550142"]) == {
        "+12025550142": ListEntry(ListKind.BOT_NUMBERS, "+12025550142", {})
    }
