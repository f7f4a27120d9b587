"""A decision record's leaf in its client's history (phoneid.domain.history): the entry's exact bytes,
the leaf hash made from them, and the same leaf made again from the stored record."""

from __future__ import annotations

import hashlib
import json
import zlib
from datetime import UTC, datetime, timedelta

import pytest
from boto3.dynamodb.types import TypeDeserializer

from phoneid.adapters.dynamodb.decision_items import from_record_item, packed, to_record_item, unpacked
from phoneid.domain.decisions import (
    DecisionRecord,
    Kind,
    NumberRef,
    Outcome,
    PolicyRef,
    PossessionAttempts,
)
from phoneid.domain.history import canonical, decision_entry, sealed
from phoneid.domain.policy import Signal

NONCE = bytes(range(16))
STARTED = datetime(2026, 12, 2, 9, 30, 0, 123456, tzinfo=UTC)


def _record(**changes: object) -> DecisionRecord:
    fields: dict[str, object] = {
        "id": "3f6c1c2e-8d0b-4c55-9a4e-5b1e2f0a9c77",
        "client_id": "client-a",
        "tier": "sandbox",
        "region": "US",
        "kind": Kind.STAGED,
        "flow": "desktop",
        "started_at": STARTED,
        "ended_at": STARTED + timedelta(seconds=42),
        "outcome": Outcome.FAIL,
        "categories": {"possession": "pass", "reputation": "fail"},
        "reasons": (3104,),
        "monitored": (3301,),
        "step": "complete",
        "policy": PolicyRef("default", "2026-11", "ab" * 32),
        "facts": {"simSwapDays": 3, "lineType": "mobile", "listed": ["aml"]},
        "facts_at": STARTED + timedelta(seconds=40),
        "possession": PossessionAttempts(status="passed", method="otp", sms_sent=1, otp_entries=2),
        "number": NumberRef("mac-of-the-number", "US", "42"),
        "client_request_id": "order-7781 für Zoë",
        "request_mac": "mac-of-the-request",
    }
    fields.update(changes)
    return DecisionRecord(**fields)  # type: ignore[arg-type]


def test_a_decisions_entry_is_these_bytes() -> None:
    # The format is the history's: a change to it changes every leaf made from then on, so it is pinned.
    expected = (
        '{"categories":{"possession":"pass","reputation":"fail"},"client":"client-a",'
        '"clientRequestId":"order-7781 für Zoë","endedAt":"2026-12-02T09:30:42.123Z",'
        '"facts":{"lineType":"mobile","listed":["aml"],"simSwapDays":3},'
        '"factsAt":"2026-12-02T09:30:40.123Z","flow":"desktop",'
        '"id":"3f6c1c2e-8d0b-4c55-9a4e-5b1e2f0a9c77","kind":"staged","monitoredCodes":[3301],'
        '"nonce":"AAECAwQFBgcICQoLDA0ODw","number":{"country":"US","lastTwo":"42"},"outcome":"fail",'
        '"policy":{"hash":"' + "ab" * 32 + '","id":"default","version":"2026-11"},'
        '"possession":{"linkOpened":false,"linksSent":0,"method":"otp",'
        '"mobileAuth":"not-tried","otpEntries":2,"smsSent":1,"status":"passed"},'
        '"reasonCodes":[3104],"region":"US","startedAt":"2026-12-02T09:30:00.123Z","step":"complete",'
        '"tier":"sandbox","type":"decision","v":1}'
    )

    assert canonical(decision_entry(_record(), NONCE)).decode() == expected


def test_a_sealed_record_carries_the_hash_of_its_entry_as_an_rfc_9162_leaf() -> None:
    record = sealed(_record(), NONCE)

    entry = canonical(decision_entry(_record(), NONCE))
    assert record.nonce == NONCE
    assert record.leaf == hashlib.sha256(b"\x00" + entry).digest()


def test_each_nonce_gives_another_leaf_and_a_nonce_is_sixteen_bytes() -> None:
    assert sealed(_record(), NONCE).leaf != sealed(_record(), bytes(16)).leaf
    with pytest.raises(ValueError, match="a nonce is 16 bytes, not 8"):
        sealed(_record(), bytes(8))


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"flow": None, "policy": None, "facts": {}, "facts_at": None, "possession": None, "number": None},
        {
            "kind": Kind.VERIFY_BATCH,
            "outcome": Outcome.ERROR,
            "error_code": 8001,
            "categories": {},
            "reasons": (),
        },
        {"client_request_id": None, "monitored": ()},
    ],
)
def test_the_stored_record_makes_the_same_leaf_again(changes: dict[str, object]) -> None:
    # Given a record sealed as the deciding call seals it, stored as the table keeps it
    record = sealed(_record(**changes), NONCE)
    item = to_record_item(record, timedelta(days=1825), sealed_request=b"sealed")
    values = {name: TypeDeserializer().deserialize(value) for name, value in item.items()}

    # When it is read back (its clientRequestId opened) and its entry made again
    again = from_record_item(values, record.client_request_id)

    # Then the entry, and so the leaf, is the one made when it was decided
    assert again.nonce == NONCE
    assert again.leaf == record.leaf
    assert canonical(decision_entry(again, NONCE)) == canonical(decision_entry(record, NONCE))


def test_packed_fields_read_back_and_a_value_packed_without_the_dictionary_still_reads() -> None:
    # Records were first packed with plain zlib; they must read after the dictionary came
    fields = {"facts": {"simTrustScore": 90, "lineType": "mobile"}, "step": "complete"}

    assert unpacked(packed(fields)) == fields
    assert unpacked(zlib.compress(json.dumps(fields).encode(), 9)) == fields


def test_the_dictionary_halves_a_staged_flows_facts() -> None:
    facts = dict.fromkeys((s.value for s in Signal), 0)
    alone = len(zlib.compress(json.dumps({"facts": facts}, separators=(",", ":")).encode(), 9))

    assert len(packed({"facts": facts})) < alone / 2
