"""Each decision record is a leaf of its client's history (docs/adr/0120): the deciding call stores
a nonce and the leaf's hash with the record, the stored record makes the same leaf again, and the
record's index entries stay one write unit each."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeDeserializer

from bench.cost_bench.dynamodb_units import index_entry, item_size
from phoneid.adapters.dynamodb.decision_items import from_record_item
from phoneid.adapters.dynamodb.history import DynamoHistoryStore
from phoneid.domain.history import canonical, decision_entry
from phoneid.domain.merkle import leaf_hash, root
from tests.device import Device
from tests.harness import Api
from tests.integration.test_decision_records import (
    LENA,
    VERIFIED_USER_PASS,
    Decisions,
    record_items,
    staged_flow,
    unify_flow,
)
from tests.sandbox_numbers import TOKEN_ONLY


def test_every_kind_of_record_carries_the_leaf_its_stored_fields_make_again_in_one_write_unit(
    api: Api,
) -> None:
    # Given a staged flow, a unify flow and a verify with a clientRequestId, and a verify batch without
    integrator = api.integrator()
    staged_flow(integrator)
    unify_id, token = unify_flow(integrator)
    device = Device(integrator.api, token)
    device.send_otp()
    device.enter("1234")
    device.register()
    assert (
        integrator.post("/v3/unify-status", {"correlationId": unify_id, "clientRequestId": "u-1"}).status
        == 200
    )
    integrator.post(
        "/v3/verify",
        {
            "phoneNumber": VERIFIED_USER_PASS,
            "verificationType": "verifiedUser",
            "clientRequestId": "v-1",
            **LENA,
        },
    )
    integrator.post(
        "/v3/verify/batch",
        {
            "items": [
                {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA},
                {"phoneNumber": 12},
            ],
        },
    )
    decisions = Decisions(api, integrator)

    # When each stored record is read back, its clientRequestId as the API opens it
    items = record_items(api)
    indexes = api.stack.template.of_type("AWS::DynamoDB::Table")["DecisionsTable"]["GlobalSecondaryIndexes"]
    checked: list[tuple[str, bool, int, list[int]]] = []
    for item in items:
        values: dict[str, Any] = {name: TypeDeserializer().deserialize(v) for name, v in item.items()}
        shown = decisions.get(str(values["pk"]).split("#", 1)[1])
        assert shown.status == 200, shown.body
        record = from_record_item(values, shown.json().get("clientRequestId"))

        # Then its leaf is the hash of the entry its fields and nonce make
        assert record.nonce is not None
        assert len(record.nonce) == 16
        assert record.leaf == leaf_hash(canonical(decision_entry(record, record.nonce)))
        entries = [index_entry(index, ["pk"], item) for index in indexes]
        checked.append(
            (record.kind.value, "request" in item, item_size(item), [item_size(e) for e in entries])
        )

    # And the record and each of its index entries are one write unit, a sealed clientRequestId included
    assert {kind for kind, *_ in checked} == {"staged", "unify", "verify", "verify-batch"}
    assert all(max(entries) < 1024 for *_, entries in checked), checked
    assert all(size < 1024 for _, _, size, _ in checked), checked
    assert {sealed for _, sealed, *_ in checked} == {True, False}
    assert len({bytes(TypeDeserializer().deserialize(i["nonce"])) for i in items}) == len(items)


# --- appended to the clients' trees, once ---------------------------------------------------------


def history(api: Api) -> DynamoHistoryStore:
    return DynamoHistoryStore(
        boto3.client("dynamodb"), api.stack.physical_ids["DecisionHistoryTable"], api.clock
    )


def stored_leaves(api: Api) -> dict[str, bytes]:
    """Each stored record's leaf, by its id."""
    return {
        str(item["pk"]["S"]).split("#", 1)[1]: bytes(TypeDeserializer().deserialize(item["leaf"]))
        for item in record_items(api)
    }


def test_records_become_leaves_of_their_clients_trees_in_the_order_written_and_once(api: Api) -> None:
    # Given two clients' decisions
    first, second = api.integrator(), api.integrator()
    made = [staged_flow(first) for _ in range(3)]
    verified = second.post(
        "/v3/verify", {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser"} | LENA
    )
    assert verified.status == 200

    # When the history's appends run, then run again with nothing new
    runs = [api.invoke("DecisionLogFunction", {}), api.invoke("DecisionLogFunction", {})]

    # Then each client's tree holds its records once, in the order they were written
    assert [(run["appended"], run["clients"], run["contended"]) for run in runs] == [
        (4, 2, False),
        (0, 0, False),
    ]
    store, leaves = history(api), stored_leaves(api)
    in_first = store.leaves(first.client_id, 3)
    assert [record_id for record_id, _ in in_first] == made
    assert [leaf for _, leaf in in_first] == [leaves[record_id] for record_id in made]
    in_second = store.leaves(second.client_id, 1)
    assert in_second == [(verified.json()["correlationId"], leaves[verified.json()["correlationId"]])]

    # And each head's frontier gives the RFC 9162 root of those leaves
    frontiers = store.frontiers([first.client_id, second.client_id])
    assert frontiers[first.client_id].size == 3
    assert frontiers[first.client_id].root() == root([leaf for _, leaf in in_first])
    assert frontiers[second.client_id].root() == root([leaves[verified.json()["correlationId"]]])


def test_later_decisions_are_appended_after_the_earlier_ones(api: Api) -> None:
    # Given a tree of two records
    integrator = api.integrator()
    earlier = [staged_flow(integrator) for _ in range(2)]
    api.invoke("DecisionLogFunction", {})

    # When two more are decided and appended
    later = [staged_flow(integrator) for _ in range(2)]
    run = api.invoke("DecisionLogFunction", {})

    # Then the tree holds the four in order, and its root is theirs
    store, leaves = history(api), stored_leaves(api)
    assert run["appended"] == 2
    held = store.leaves(integrator.client_id, 4)
    assert [record_id for record_id, _ in held] == earlier + later
    assert store.frontiers([integrator.client_id])[integrator.client_id].root() == root(
        [leaves[record_id] for record_id in earlier + later]
    )


def test_an_erased_record_keeps_its_leaf_in_the_tree(api: Api) -> None:
    # Given a record appended, then erased
    integrator = api.integrator()
    kept = staged_flow(integrator)
    api.invoke("DecisionLogFunction", {})
    leaf = stored_leaves(api)[kept]
    assert Decisions(api, integrator).erase(TOKEN_ONLY).json()["erased"] == 1

    # When the appends run again
    run = api.invoke("DecisionLogFunction", {})

    # Then nothing is taken out of the tree: the erasure is no leaf, and the leaf stays
    assert run["appended"] == 0
    assert history(api).leaves(integrator.client_id, 1) == [(kept, leaf)]


def test_a_record_written_again_is_appended_again_only_when_its_leaf_changed(api: Api) -> None:
    # Given a record appended
    integrator = api.integrator()
    decided = staged_flow(integrator)
    api.invoke("DecisionLogFunction", {})
    table = api.stack.physical_ids["DecisionsTable"]
    dynamodb = boto3.client("dynamodb")
    item = next(i for i in record_items(api) if i["pk"]["S"].endswith(decided))

    # When it is written again as it was, then with another leaf (a batch retried, its nonce new)
    dynamodb.put_item(TableName=table, Item=item)
    unchanged = api.invoke("DecisionLogFunction", {})
    rewritten_leaf = bytes(32)
    dynamodb.put_item(TableName=table, Item=item | {"leaf": {"B": rewritten_leaf}})
    changed = api.invoke("DecisionLogFunction", {})

    # Then only the changed leaf is appended, after the first
    assert (unchanged["appended"], changed["appended"]) == (0, 1)
    held = history(api).leaves(integrator.client_id, 2)
    assert [record_id for record_id, _ in held] == [decided, decided]
    assert held[1][1] == rewritten_leaf


def test_a_run_that_fails_commits_nothing_and_the_next_appends_each_record_once(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given decisions of many clients, and commits that fail after the first
    clients = [api.integrator() for _ in range(3)]
    for integrator in clients:
        staged_flow(integrator)
    commit = DynamoHistoryStore.commit
    calls = []

    def failing_after_one(self: DynamoHistoryStore, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("the table did not answer")
        commit(self, *args, **kwargs)

    monkeypatch.setattr(DynamoHistoryStore, "most_clients", 1)  # a commit per client
    with monkeypatch.context() as patched:
        patched.setattr(DynamoHistoryStore, "commit", failing_after_one)
        with pytest.raises(RuntimeError):
            api.invoke("DecisionLogFunction", {})

    # When the next run comes
    run = api.invoke("DecisionLogFunction", {})

    # Then the first client was appended by the failed run, the other two by the next, each once
    store = history(api)
    assert run["appended"] == 2
    assert [store.frontiers([c.client_id])[c.client_id].size for c in clients] == [1, 1, 1]


def test_a_run_that_lost_the_race_to_another_writes_nothing(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a decision, and a second run that appends it while the first was between read and commit
    integrator = api.integrator()
    staged_flow(integrator)
    commit = DynamoHistoryStore.commit

    def another_run_first(self: DynamoHistoryStore, *args: Any, **kwargs: Any) -> None:
        with pytest.MonkeyPatch.context() as inner:
            inner.setattr(DynamoHistoryStore, "commit", commit)
            assert api.invoke("DecisionLogFunction", {})["appended"] == 1
        commit(self, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(DynamoHistoryStore, "commit", another_run_first)
        lost = api.invoke("DecisionLogFunction", {})

    # Then the first run is told it lost, and the record is in the tree once
    assert (lost["appended"], lost["contended"]) == (0, True)
    assert history(api).frontiers([integrator.client_id])[integrator.client_id].size == 1
