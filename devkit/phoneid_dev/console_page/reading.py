"""What the console takes from a request and its answer: named fields of known shapes, never a body
as it came. A request's body is the caller's (a date of birth, an SSN, a secret), an answer's may
carry a token: nothing is copied that is not an identifier, a status, a code of the API or a
reason code of its catalogue (docs/adr/0105-a-console-fed-by-what-the-stack-already-sees.md)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from phoneid.domain.reasons import REASONS, Category

# Client ids and correlation ids as the service makes them; anything else is not shown.
_IDENTIFIER = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_CATEGORIES = frozenset(category.value for category in Category)
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})


def json_object(text: str | None) -> dict[str, Any]:
    """``text`` as a JSON object, or an empty one (not JSON, or another shape)."""
    if not text:
        return {}
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def http_method(method: str) -> str:
    """The request's method when it is one of HTTP's; a caller may send any token there."""
    return method.upper() if method.upper() in _METHODS else "(other)"


def identifier(value: Any) -> str | None:
    return value if isinstance(value, str) and _IDENTIFIER.match(value) else None


def error_code(status: int, answer: Mapping[str, Any]) -> int | None:
    """The API's error code of a failed answer (``{"code": 8001, ...}``): 8000-8999, or a reason
    code of the catalogue (9100, 9101); any other number is not one of the API's."""
    code = answer.get("code")
    if status < 400 or isinstance(code, bool) or not isinstance(code, int | str):
        return None
    text = str(code)
    if not (text.isascii() and text.isdigit()) or len(text) != 4:
        return None
    return int(text) if text.startswith("8") or int(text) in REASONS else None


def token_claims(headers: Mapping[str, str]) -> dict[str, Any]:
    """The claims of the bearer token, unverified: the gateway's authorizer judged it, and the
    console keeps only identifiers it can check otherwise (a known client, a known flow)."""
    authorization = _header(headers, "authorization")
    if not authorization.lower().startswith("bearer "):
        return {}
    parts = authorization[7:].strip().split(".")
    if len(parts) != 3:
        return {}
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
    except (ValueError, binascii.Error):
        return {}
    return json_object(payload.decode("utf-8", errors="replace"))


def claimed_client(headers: Mapping[str, str], body: str | None) -> str | None:
    """Which client a request names: its token's (a flow token's ``cid``, an access token's ``sub``),
    or at ``/token`` the form's ``client_id`` or Basic credentials' user. Unchecked: the caller
    shows it only when the stack knows that client."""
    claims = token_claims(headers)
    if claims:
        return identifier(claims.get("cid") or claims.get("sub"))
    authorization = _header(headers, "authorization")
    if authorization.lower().startswith("basic "):
        try:
            user = base64.b64decode(authorization[6:].strip()).decode("utf-8", errors="replace")
        except (ValueError, binascii.Error):
            return None
        return identifier(user.split(":", 1)[0])
    if body and "x-www-form-urlencoded" in _header(headers, "content-type"):
        named = parse_qs(body).get("client_id")
        return identifier(named[0]) if named else None
    return None


def flow_token_flow(headers: Mapping[str, str]) -> str | None:
    """The flow a client SDK's call names: its flow token's subject (the correlationId)."""
    claims = token_claims(headers)
    return identifier(claims.get("sub")) if claims.get("cid") else None


def success(answer: Mapping[str, Any]) -> bool | str | None:
    """An answer's ``success``: true, false (verify's strings too) or ``pending`` (unify)."""
    value = answer.get("success")
    if isinstance(value, bool):
        return value
    words: dict[str, bool | str] = {"true": True, "false": False, "pending": "pending"}
    return words.get(value) if isinstance(value, str) else None


def evaluation(answer: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``evaluation`` object as category -> {result, reasons: [codes of the catalogue]}."""
    found = answer.get("evaluation")
    if not isinstance(found, dict):
        return {}
    kept: dict[str, dict[str, Any]] = {}
    for category, outcome in found.items():
        if category not in _CATEGORIES or not isinstance(outcome, dict):
            continue
        result = outcome.get("result")
        reasons = outcome.get("failureReasons")
        kept[category] = {
            "result": result if result in ("pass", "fail") else None,
            "reasons": sorted(reason_codes(reasons.keys() if isinstance(reasons, dict) else ())),
        }
    return kept


def reason_codes(found: Any) -> set[int]:
    """The reason codes of the API's catalogue among ``found`` (strings or numbers)."""
    codes = set()
    for code in found:
        text = str(code)
        if text.isascii() and text.isdigit() and len(text) == 4 and int(text) in REASONS:
            codes.add(int(text))
    return codes


def _header(headers: Mapping[str, str], name: str) -> str:
    return next((value for key, value in headers.items() if key.lower() == name), "")
