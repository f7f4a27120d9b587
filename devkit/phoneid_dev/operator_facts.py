"""The facts a fake operator's number is scripted with, and the CAMARA network APIs' answers from
them (``phoneid_dev.operator``; the facts are listed in its docstring)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import Any

# CAMARA's error codes for the statuses a script can ask for.
ERRORS = {
    400: ("INVALID_ARGUMENT", "Client specified an invalid argument, request body or query param."),
    401: ("UNAUTHENTICATED", "Request not authenticated due to missing, invalid, or expired credentials."),
    403: ("PERMISSION_DENIED", "Client does not have sufficient permissions to perform this action."),
    404: ("IDENTIFIER_NOT_FOUND", "Device identifier not found."),
    422: ("SERVICE_NOT_APPLICABLE", "The service is not available for the provided identifier."),
    429: ("TOO_MANY_REQUESTS", "Rate limit reached."),
    500: ("INTERNAL", "Unknown server error. Typically a server bug."),
    502: ("BAD_GATEWAY", "An upstream internal service cannot be reached."),
    503: ("UNAVAILABLE", "Service Unavailable."),
    504: ("TIMEOUT", "Request timeout exceeded."),
}
# Network API path -> the API's name in scripted failures.
SIGNAL_APIS = {
    "/sim-swap/v2/retrieve-date": "sim-swap",
    "/call-forwarding-signal/v0.4/unconditional-call-forwardings": "call-forwarding",
    "/kyc-tenure/v0.2/check-tenure": "tenure",
    "/number-recycling/v0.2/check": "recycling",
    "/kyc-match/v0.4/match": "kyc-match",
    "/device-reachability-status/v1/retrieve": "reachability",
    "/device-roaming-status/v1/retrieve": "roaming",
}
KYC_FIELDS = (
    "givenName",
    "familyName",
    "birthdate",
    "idDocument",
    "address",
    "postalCode",
    "locality",
    "region",
    "email",
)
FACTS = (
    "latestSimChange",
    "callForwarding",
    "subscribedSince",
    "subscriberChangedAt",
    "subscriber",
    "reachable",
    "roamingCountry",
    "unknown",
    "fail",
)
NEUTRAL_SUBSCRIBED_SINCE = date(2015, 1, 1)


def _fold(value: str, compact: bool = False) -> str:
    """Case- and accent-insensitive form; ``compact`` also drops spaces and punctuation."""
    text = "".join(c for c in unicodedata.normalize("NFKD", value) if not unicodedata.combining(c))
    text = " ".join(text.casefold().split())
    return re.sub(r"[^0-9a-z]", "", text) if compact else text


def _kyc(facts: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    subscriber = facts.get("subscriber") or {}
    requested = [name for name in KYC_FIELDS if isinstance(payload.get(name), str) and payload[name]]
    if not requested:
        raise ValueError("no field to match")
    answer: dict[str, Any] = {}
    for name in requested:
        known = subscriber.get(name)
        if not known:
            answer[f"{name}Match"] = "not_available"
            continue
        compact = name in ("idDocument", "postalCode", "birthdate")
        same = _fold(payload[name], compact) == _fold(known, compact)
        answer[f"{name}Match"] = "true" if same else "false"
    return answer


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _tenure(facts: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    since = facts.get("subscribedSince", NEUTRAL_SUBSCRIBED_SINCE)
    return {"tenureDateCheck": since <= date.fromisoformat(payload["tenureDate"])}


def _recycling(facts: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    specified = date.fromisoformat(payload["specifiedDate"])
    changed = facts.get("subscriberChangedAt")
    return {"phoneNumberRecycled": changed is not None and changed > specified}


def _sim_swap(facts: dict[str, Any], _: dict[str, Any]) -> dict[str, Any]:
    changed = facts.get("latestSimChange")
    return {"latestSimChange": changed.isoformat().replace("+00:00", "Z") if changed else None}


def _reachability(facts: dict[str, Any], _: dict[str, Any]) -> dict[str, Any]:
    if facts.get("reachable", True):
        return {"lastStatusTime": _now(), "reachable": True, "connectivity": ["DATA", "SMS"]}
    return {"lastStatusTime": _now(), "reachable": False}


def _roaming(facts: dict[str, Any], _: dict[str, Any]) -> dict[str, Any]:
    country = facts.get("roamingCountry")
    if not country:
        return {"lastStatusTime": _now(), "roaming": False}
    return {"lastStatusTime": _now(), "roaming": True, "countryName": [country]}


ANSWERS: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "sim-swap": _sim_swap,
    "call-forwarding": lambda facts, _: {"active": bool(facts.get("callForwarding", False))},
    "tenure": _tenure,
    "recycling": _recycling,
    "kyc-match": _kyc,
    "reachability": _reachability,
    "roaming": _roaming,
}


def check_fact(name: str, value: Any) -> Any:
    """The fact in the form the answers use; ValueError for an unknown fact or a wrong value."""
    if name == "latestSimChange":
        if value is None:
            return None
        changed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        return changed if changed.tzinfo else changed.replace(tzinfo=UTC)
    if name in ("subscribedSince", "subscriberChangedAt"):
        if value is None:
            return None if name == "subscriberChangedAt" else NEUTRAL_SUBSCRIBED_SINCE
        if isinstance(value, datetime):
            return value.date()
        return value if isinstance(value, date) else date.fromisoformat(str(value))
    if name in ("callForwarding", "reachable", "unknown"):
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false")
        return value
    if name == "roamingCountry":
        if value is not None and not (isinstance(value, str) and re.fullmatch(r"[A-Za-z]{2}", value)):
            raise ValueError("roamingCountry must be an ISO 3166 alpha-2 code or null")
        return value.upper() if value else None
    if name == "subscriber":
        if not isinstance(value, Mapping) or not all(
            key in KYC_FIELDS and isinstance(item, str) for key, item in value.items()
        ):
            raise ValueError(f"subscriber must map some of {', '.join(KYC_FIELDS)} to strings")
        return dict(value)
    if name == "fail":
        if not isinstance(value, Mapping):
            raise ValueError("fail must map API names to a status or 'slow:<seconds>'")
        apis = set(SIGNAL_APIS.values())
        checked: dict[str, int | str] = {}
        for api, how in value.items():
            if api not in apis:
                raise ValueError(f"unknown API {api!r}: one of {', '.join(sorted(apis))}")
            status = isinstance(how, int) and not isinstance(how, bool) and 400 <= how <= 599
            other = isinstance(how, str) and (how == "malformed" or re.fullmatch(r"slow:\d+(\.\d+)?", how))
            if not (status or other):
                raise ValueError(f"fail[{api!r}] must be an HTTP status, 'slow:<seconds>' or 'malformed'")
            checked[api] = how
        return checked
    raise ValueError(f"unknown fact {name!r}: one of {', '.join(FACTS)}")
