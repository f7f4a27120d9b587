"""The signal lists table on moto, built from template.yaml: what is stored, what lookups find."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from phoneid.adapters.dynamodb import batch_io
from phoneid.adapters.dynamodb.lists import DynamoSignalLists
from phoneid.domain.signals import ListEntry, ListKind
from phoneid_cli.main import main
from tests.harness import Api


@pytest.fixture
def api(make_api: Callable[..., Api]) -> Api:
    return make_api(tier="production")


def test_entries_are_stored_under_kind_and_key(api: Api) -> None:
    # Given entries of two kinds
    lists = api.container.signal_lists

    # When written
    written = lists.put_many(
        [
            ListEntry(ListKind.SIM_TRUST, "+12025550142", {"score": 12}),
            ListEntry(ListKind.AML, "viktor bout|1967-01-13", {"listNames": ["OFAC SDN"]}),
        ]
    )

    # Then each is one item under "{kind}#{key}" with its kind, key and values
    assert written == 2
    items = {item["pk"]["S"]: item for item in api.table_items("SignalListsTable")}
    assert set(items) == {"sim-trust#+12025550142", "aml#viktor bout|1967-01-13"}
    trust = items["sim-trust#+12025550142"]
    assert trust["kind"] == {"S": "sim-trust"}
    assert trust["key"] == {"S": "+12025550142"}
    assert trust["values"] == {"M": {"score": {"N": "12"}}}


def test_a_lookup_finds_only_the_keys_listed_under_its_kind(api: Api) -> None:
    # Given a number on the public-SMS list and another on the bot list
    lists = api.container.signal_lists
    lists.put_many(
        [
            ListEntry(ListKind.PUBLIC_SMS, "+12025550142"),
            ListEntry(ListKind.BOT_NUMBERS, "+12025550143"),
        ]
    )

    # When public-SMS is asked about both numbers and one never listed
    found = lists.lookup(ListKind.PUBLIC_SMS, ["+12025550142", "+12025550143", "+12025550144"])

    # Then only the public-SMS number is found, as the entry written
    assert found == {"+12025550142": ListEntry(ListKind.PUBLIC_SMS, "+12025550142", {})}
    assert lists.lookup(ListKind.PUBLIC_SMS, []) == {}


def test_values_round_trip_with_numbers_lists_and_floats(api: Api) -> None:
    # Given an entry whose values hold an int, a float, a list and text
    lists = api.container.signal_lists
    entry = ListEntry(
        ListKind.LINE_TYPES, "+12025550142", {"lineType": "voip-nonfixed", "n": 3, "w": 0.25, "l": ["a"]}
    )

    # When written and read back
    lists.put_many([entry])

    # Then the values are as written (DynamoDB numbers back to int and float)
    assert lists.lookup(ListKind.LINE_TYPES, ["+12025550142"]) == {"+12025550142": entry}


def test_many_entries_are_written_and_found_in_batches(api: Api) -> None:
    # Given 130 numbers (more than one BatchWriteItem of 25 and one BatchGetItem of 100)
    lists = api.container.signal_lists
    numbers = [f"+1202555{n:04d}" for n in range(130)]

    # When all are written, with one listed twice (the later entry wins)
    written = lists.put_many(
        [ListEntry(ListKind.SIM_TRUST, number, {"score": 50}) for number in numbers]
        + [ListEntry(ListKind.SIM_TRUST, numbers[0], {"score": 7})]
    )
    found = lists.lookup(ListKind.SIM_TRUST, [*numbers, "+12025559999", numbers[1]])

    # Then every number is found once, the repeated one with its later values
    assert written == 131
    assert set(found) == set(numbers)
    assert found[numbers[0]].values == {"score": 7}
    assert len(api.table_items("SignalListsTable")) == 130


class _Unprocessing:
    """The real client, but the first call of each batch operation leaves half its work unprocessed."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 - boto3's name
        self.calls.append("write")
        [(table, requests)] = RequestItems.items()
        if len(self.calls) == 1:
            half = len(requests) // 2
            self._client.batch_write_item(RequestItems={table: requests[:half]})
            return {"UnprocessedItems": {table: requests[half:]}}
        return dict(self._client.batch_write_item(RequestItems=RequestItems))

    def batch_get_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 - boto3's name
        self.calls.append("get")
        [(table, request)] = RequestItems.items()
        if self.calls.count("get") == 1:
            half = len(request["Keys"]) // 2
            done = self._client.batch_get_item(RequestItems={table: {"Keys": request["Keys"][:half]}})
            return {
                "Responses": done["Responses"],
                "UnprocessedKeys": {table: {"Keys": request["Keys"][half:]}},
            }
        return dict(self._client.batch_get_item(RequestItems=RequestItems))


def test_unprocessed_items_and_keys_are_retried(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a DynamoDB that leaves half of the first write and of the first read unprocessed
    monkeypatch.setattr(batch_io.time, "sleep", lambda _: None)
    client = _Unprocessing(api.container.dynamodb)
    lists = DynamoSignalLists(client, api.stack.physical_ids["SignalListsTable"])
    numbers = [f"+1202555{n:04d}" for n in range(10)]

    # When ten entries are written and looked up
    lists.put_many([ListEntry(ListKind.BOT_NUMBERS, number) for number in numbers])
    found = lists.lookup(ListKind.BOT_NUMBERS, numbers)

    # Then the unprocessed half was sent again each time, and everything was written and found
    assert client.calls == ["write", "write", "get", "get"]
    assert set(found) == set(numbers)


def test_an_import_stores_ssns_only_as_their_kms_mac(api: Api) -> None:
    # Given a deceased list with a number and an SSN
    text = json.dumps({"phoneNumber": "+12025550142", "ssn": "123-45-6789"}) + "\n"

    # When imported through the stack's import service (KMS MAC on moto)
    report = api.container.signal_list_import.run(ListKind.DECEASED, text, "jsonl")

    # Then the number and the MAC are stored, and no digits of the SSN
    assert (report.imported, report.entries, report.rejected) == (1, 2, [])
    mac = api.container.code_mac.digest("list-ssn:123456789")
    assert set(api.container.signal_lists.lookup(ListKind.DECEASED, ["+12025550142", mac])) == {
        "+12025550142",
        mac,
    }
    raw = json.dumps(api.table_items("SignalListsTable"))
    assert "123456789" not in raw
    assert "6789" not in raw.replace(mac, "")


def test_the_cli_imports_a_csv_list(api: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a CSV file of line types, one row with a type the registry does not know
    path = tmp_path / "line-types.csv"
    path.write_text("phoneNumber,lineType\n+12025550142,voip-nonfixed\n+12025550143,fax\n")

    # When imported with the CLI, all or nothing, then skipping the invalid row
    refused = main(["signals", "import", "line-types", str(path)])
    refused_out = capsys.readouterr()
    skipped = main(["signals", "import", "line-types", str(path), "--skip-invalid"])
    skipped_out = capsys.readouterr()

    # Then the first run writes nothing and names line 3; the second imports the valid row
    assert refused == 1
    assert f"{path}:3: rejected: invalid fields: lineType" in refused_out.err
    assert "fax" not in refused_out.err
    assert "imported 0 line-types records" in refused_out.out
    assert skipped == 0
    assert "imported 1 line-types records (1 entries), rejected 1" in skipped_out.out
    found = api.container.signal_lists.lookup(ListKind.LINE_TYPES, ["+12025550142", "+12025550143"])
    assert {k: dict(v.values) for k, v in found.items()} == {"+12025550142": {"lineType": "voip-nonfixed"}}


def test_the_cli_lists_the_kinds_and_their_fields(capsys: pytest.CaptureFixture[str]) -> None:
    # Given the CLI
    # When the kinds are asked for as JSON
    assert main(["signals", "kinds", "--json"]) == 0

    # Then every kind is listed with its fields and which are required
    kinds = {k["kind"]: k["fields"] for k in json.loads(capsys.readouterr().out)}
    assert set(kinds) == {k.value for k in ListKind}
    assert kinds["aml"] == [
        {"name": "firstName", "required": True},
        {"name": "lastName", "required": True},
        {"name": "dob", "required": False},
        {"name": "listName", "required": False},
    ]
