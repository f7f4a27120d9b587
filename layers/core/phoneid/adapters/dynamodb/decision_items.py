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
            "listing": packed(listing),
            "request": sealed_request,
            "data": packed(data),
            "nonce": record.nonce,
            "leaf": record.leaf,
            "ttl": expiry(record.ended_at, retention),
        }
    )


# zlib's preset dictionary for a record's packed attributes: the names every record repeats (its
# fields, the signals' names as facts hold them), so that a record's facts pack to about half of what
# they take alone and a record without a clientRequestId stays under 1 KB (one write unit). Never
# changed: a packed value names its dictionary by its Adler-32 in the zlib header; a new one goes
# beside it in _DICTIONARIES, and values packed before it still unpack.
_DICTIONARY_1 = (
    b'{"flow":"desktop","flow":"mobile","startedAt":"2026-","errorCode":8001,"number":["US","'
    b'"possession":{"status":"not-asked","status":"pending","status":"failed","method":"otp",'
    b'"method":"instant-link","method":"mobile-auth","mobile_auth":"failed","mobile_auth":"passed",'
    b'"sms_sent":1,"otp_entries":1,"links_sent":1,"link_opened":true,"device_key":"used",'
    b'"device_key":"bound","method":"preset","status":"passed"},'
    b'"monitored":[],"step":"validate","step":"challenge","step":"unify-status","step":"expired",'
    b'"facts":{"possession":"passed","keyMismatch":false,"identityFound":true,"identityMismatches":0,'
    b'"identityConfirmedElements":2,"ssnMatch":"mismatch","dobMatch":"match","nameMatch":"match",'
    b'"addressMatch":"match","sourcesWithMismatch":0,"activeIdentity":true,"anyInformation":true,'
    b'"simSwapHoursAgo":null,"callForwarding":false,"tenureDays":3650,"numberRecycled":false,'
    b'"kycNameMatch":"match","kycElementsSupplied":0,"kycElementsUnconfirmed":0,'
    b'"secondarySourceMismatches":0,"networkReachable":true,"lineType":"mobile",'
    b'"lineTypeRegistry":null,"publicSms":false,"simTrustScore":90,"portHoursAgo":null,'
    b'"botLinked":false,"amlListed":false,"ssnIssuedBeforeBirth":false,'
    b'"claimedAddressCorrectional":false,"numberAddressCorrectional":false,"identityDeceased":false,'
    b'"numberOwnerDeceased":false,"identitiesOnNumber":1,"shortTenureIdentitiesOnNumber":0,'
    b'"daysSinceAssociation":null,"disconnectSinceAssociation":false,"priorActivity":12,'
    b'"recentChecks":0,"recentChecksSharingAttributes":0,"numberChangeEvents":0,"partnerFindings":[],'
    b'{"sourceFailed":true},"factsAt":"2026-","tier":"production","tier":"sandbox","region":"EU",'
    b'"categories":{"identification":"fail","authentication":"fail","compliance":"fail","risk":"fail",'
    b'"identification":"pass","authentication":"pass","compliance":"pass","risk":"pass"},'
    b'"step":"complete","policy":["client","default","'
)
_DICTIONARIES = {zlib.adler32(_DICTIONARY_1): _DICTIONARY_1}
_PRESET_DICTIONARY = 0x20  # FDICT, in the zlib header's second byte


def packed(fields: Mapping[str, Any]) -> bytes:
    """``fields`` (empty ones left out) as compact JSON, compressed under the current dictionary."""
    text = json.dumps({k: v for k, v in fields.items() if v not in (None, [], {})}, separators=(",", ":"))
    compressor = zlib.compressobj(9, zdict=_DICTIONARY_1)
    return compressor.compress(text.encode()) + compressor.flush()


def unpacked(value: bytes) -> dict[str, Any]:
    """What ``packed`` made, under whichever dictionary it names (or none, as records were first packed)."""
    if len(value) > 6 and value[1] & _PRESET_DICTIONARY:
        reader = zlib.decompressobj(zdict=_DICTIONARIES[int.from_bytes(value[2:6], "big")])
    else:
        reader = zlib.decompressobj()
    fields: dict[str, Any] = json.loads(reader.decompress(value) + reader.flush())
    return fields


def from_record_item(values: Mapping[str, Any], client_request_id: str | None) -> DecisionRecord:
    """``values``: the item's plain values (``items.plain``), from the table or from an index (which
    holds what a list shows: no facts, policy, categories, nonce or leaf)."""
    data = unpacked(bytes(values["data"])) if values.get("data") is not None else {}
    data |= unpacked(bytes(values["listing"]))
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
    """What differs from nothing tried (``PossessionAttempts()``), which reading it back fills in."""
    if attempts is None:
        return None
    shown = {
        "status": attempts.status,
        "method": attempts.method,
        "mobile_auth": attempts.mobile_auth,
        "sms_sent": attempts.sms_sent,
        "otp_entries": attempts.otp_entries,
        "links_sent": attempts.links_sent,
        "link_opened": attempts.link_opened,
        "device_key": attempts.device_key,
    }
    untried = PossessionAttempts()
    return {
        name: value for name, value in shown.items() if name == "status" or value != getattr(untried, name)
    }
