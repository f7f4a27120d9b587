"""A decision record as an item of ``DecisionsTable``, and back.

What a list filters on stays a plain attribute (``kind``, ``outcome``, ``reasons``, ``requestMac``);
everything else is one compressed JSON attribute (``data``), so that a record is one write unit
(under 1 KB) in the table and in each index. The ``clientRequestId`` is sealed under the PII key
(``request``), bound to the client and the record's id. No attribute holds a number, a name, a date
of birth, an SSN, a code or a token: the number is its keyed MAC (``numberKey``).

Keys (every one starts with the client id, so a client never reads another's):
  ``{clientId}#{id}``             a record; ``endedSk`` = ``{endedAt}#{id}`` orders both indexes
  ``{clientId}#day#{YYYY-MM-DD}`` the day's tallies (``phoneid.domain.decisions.tallies``)
  ``{clientId}#once#{key}``       a batch's or chunk's tallies taken (expires with the records)
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any

from phoneid.adapters.dynamodb.items import to_item
from phoneid.domain.decisions import (
    DecisionRecord,
    Kind,
    NumberRef,
    Outcome,
    PolicyRef,
    PossessionAttempts,
    parse_stamp,
    stamp,
)

BY_TIME = "byTime"  # clientId, endedSk: a client's records newest first
BY_NUMBER = "byNumber"  # numberKey, endedSk: a number's records of one client


def record_pk(client_id: str, decision_id: str) -> str:
    return f"{client_id}#{decision_id}"


def record_id(values: Mapping[str, Any]) -> str:
    """A record's id, from its key (``record_pk``): a client id holds no ``#``, an id may."""
    return str(values["pk"]).split("#", 1)[1]


def day_pk(client_id: str, day: date) -> str:
    return f"{client_id}#day#{day.isoformat()}"


def once_pk(client_id: str, key: str) -> str:
    return f"{client_id}#once#{key}"


def number_key(client_id: str, mac: str) -> str:
    return f"{client_id}#{mac}"


def expiry(moment: datetime, retention: timedelta) -> int:
    return int((moment + retention).timestamp())


def request_context(client_id: str, decision_id: str) -> dict[str, str]:
    return {"clientId": client_id, "decisionId": decision_id, "use": "decision"}


# What a list shows and an erasure counts, projected into both indexes beside the plain attributes a
# list filters on: the indexes' entries stay one write unit whatever the record holds besides.
LISTED = ("kind", "outcome", "reasons", "requestMac", "listing")


def to_record_item(
    record: DecisionRecord, retention: timedelta, sealed_request: bytes | None
) -> dict[str, Any]:
    number = record.number
    listing = {
        "flow": record.flow,
        "startedAt": stamp(record.started_at),
        "errorCode": record.error_code,
        "possession": _possession_json(record.possession),
        "number": [number.country, number.last_two] if number else None,
    }
    data = {
        "categories": dict(record.categories),
        "monitored": list(record.monitored),
        "step": record.step,
        "policy": [record.policy.id, record.policy.version, record.policy.hash] if record.policy else None,
        "facts": dict(record.facts),
        "factsAt": stamp(record.facts_at) if record.facts_at else None,
        "tier": record.tier,
        "region": record.region,
    }
    return to_item(
        {
            "pk": record_pk(record.client_id, record.id),
            "clientId": record.client_id,
            "endedSk": f"{stamp(record.ended_at)}#{record.id}",
            "numberKey": number_key(record.client_id, number.mac) if number else None,
            "kind": record.kind.value,
            "outcome": record.outcome.value,
            "reasons": list(record.reasons) or None,
            "requestMac": record.request_mac,
            "listing": _compact(listing),
            "request": sealed_request,
            "data": zlib.compress(_compact(data).encode(), 9),
            "nonce": record.nonce,
            "leaf": record.leaf,
            "ttl": expiry(record.ended_at, retention),
        }
    )


def _compact(fields: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in fields.items() if v not in (None, [], {})}, separators=(",", ":"))


def from_record_item(values: Mapping[str, Any], client_request_id: str | None) -> DecisionRecord:
    """``values``: the item's plain values (``items.plain``), from the table or from an index (which
    holds what a list shows: no facts, policy, categories, nonce or leaf)."""
    data = json.loads(zlib.decompress(bytes(values["data"]))) if values.get("data") is not None else {}
    data |= json.loads(str(values["listing"]))
    ended = parse_stamp(str(values["endedSk"]).split("#", 1)[0])
    policy = data.get("policy")
    number = data.get("number")
    mac = str(values["numberKey"]).split("#", 1)[1] if values.get("numberKey") else ""
    return DecisionRecord(
        id=record_id(values),
        client_id=str(values["pk"]).split("#", 1)[0],
        tier=data.get("tier", ""),
        region=data.get("region", ""),
        kind=Kind(values["kind"]),
        flow=data.get("flow"),
        started_at=parse_stamp(data["startedAt"]),
        ended_at=ended,
        outcome=Outcome(values["outcome"]),
        categories=data.get("categories", {}),
        reasons=tuple(int(code) for code in values.get("reasons") or ()),
        monitored=tuple(data.get("monitored", ())),
        error_code=data.get("errorCode"),
        step=data.get("step"),
        policy=PolicyRef(*policy) if policy else None,
        facts=data.get("facts", {}),
        facts_at=parse_stamp(data["factsAt"]) if data.get("factsAt") else None,
        possession=PossessionAttempts(**data["possession"]) if data.get("possession") else None,
        number=NumberRef(mac, number[0], number[1]) if number else None,
        client_request_id=client_request_id,
        request_mac=values.get("requestMac"),
        nonce=_bytes(values.get("nonce")),
        leaf=_bytes(values.get("leaf")),
    )


def _bytes(value: Any) -> bytes | None:
    return bytes(value) if value is not None else None


def _possession_json(attempts: PossessionAttempts | None) -> dict[str, Any] | None:
    if attempts is None:
        return None
    return {
        "status": attempts.status,
        "method": attempts.method,
        "mobile_auth": attempts.mobile_auth,
        "sms_sent": attempts.sms_sent,
        "otp_entries": attempts.otp_entries,
        "links_sent": attempts.links_sent,
        "link_opened": attempts.link_opened,
        "device_key": attempts.device_key,
    }
