"""Each decision record is a leaf of its client's history (docs/adr/0120): the deciding call stores
a nonce and the leaf's hash with the record, the stored record makes the same leaf again, and the
record's index entries stay one write unit each."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from bench.cost_bench.dynamodb_units import index_entry, item_size
from phoneid.adapters.dynamodb.decision_items import from_record_item
from phoneid.domain.history import canonical, decision_entry
from phoneid.domain.merkle import leaf_hash
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

    # And each index entry is one write unit; the record too, but for a sealed clientRequestId's two
    assert {kind for kind, *_ in checked} == {"staged", "unify", "verify", "verify-batch"}
    assert all(max(entries) < 1024 for *_, entries in checked), checked
    assert all(size < (2048 if sealed else 1024) for _, sealed, size, _ in checked), checked
    assert {sealed for _, sealed, *_ in checked} == {True, False}
    assert len({bytes(TypeDeserializer().deserialize(i["nonce"])) for i in items}) == len(items)
