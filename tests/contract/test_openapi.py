"""docs/openapi.json: generated from the code, valid OpenAPI, and exactly the routes template.yaml serves."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from phoneid.api import (
    client_models,
    identity_models,
    models,
    staged_models,
    token_models,
    unify_models,
    verify_models,
)
from phoneid.domain.errors import MalformedRequest
from phoneid.domain.idempotency import parse_key
from phoneid_dev.openapi import openapi_path, render
from phoneid_dev.template import template

_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}

# What a client must send for each of the template's authorizers: the document's security scheme.
_SCHEME_OF_AUTHORIZER = {"AccessTokenAuthorizer": "accessToken", "FlowTokenAuthorizer": "authToken"}


def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(openapi_path().read_text())
    return document


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method.upper(), path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in _METHODS
    }


def test_committed_openapi_document_matches_the_code() -> None:
    # Regenerate with: python -m phoneid_dev.openapi
    assert openapi_path().read_text() == render()


def test_the_document_has_every_route_of_the_template_and_nothing_else() -> None:
    # Given the routes API Gateway serves (template.yaml) and the operations the document describes
    served = {(route.method, route.path) for route in template().routes}
    documented = set(_operations(_document()))

    # Then each served route is documented, and nothing documented is left unserved
    assert served - documented == set(), "routes of template.yaml missing from docs/openapi.json"
    assert documented - served == set(), "operations of docs/openapi.json that template.yaml does not serve"


def test_each_operation_requires_the_credentials_its_route_authorizer_checks() -> None:
    document = _document()
    operations = _operations(document)
    schemes = document["components"]["securitySchemes"]

    # Every authorizer of the template has a scheme in the document, a bearer JWT in Authorization
    assert set(template().authorizers) == set(_SCHEME_OF_AUTHORIZER)
    for scheme in _SCHEME_OF_AUTHORIZER.values():
        assert schemes[scheme]["type"] == "http"
        assert schemes[scheme]["scheme"] == "bearer"

    # No document-wide default hides an operation's own requirement
    assert "security" not in document
    for route in template().routes:
        security = operations[(route.method, route.path)]["security"]
        if route.authorizer is None:
            assert security == [], f"{route.method} {route.path} is open in template.yaml"
        else:
            expected = [{_SCHEME_OF_AUTHORIZER[route.authorizer]: []}]
            assert security == expected, f"{route.method} {route.path} is behind {route.authorizer}"


def test_openapi_covers_every_route_with_the_error_body() -> None:
    operations = _operations(_document())
    for route in template().routes:
        responses = operations[(route.method, route.path)]["responses"]
        # The framework's 422 is replaced; a 422 left is the Idempotency-Key's own (8021)
        assert "422" not in responses or "(8021)" in responses["422"]["description"]
        for status, response in responses.items():
            if int(status) < 400 or (route.path, status) == ("/l/{token}", "410"):
                continue  # successes, and the Instant Link's page
            assert response["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorBody"
            }, f"{route.method} {route.path} {status}"


def test_the_servers_are_the_local_stack_and_a_deployed_stack() -> None:
    local, deployed = _document()["servers"]

    # The local stack where `make dev` listens
    assert local["url"] == "http://127.0.0.1:3000"
    assert "local stack" in local["description"]

    # A deployed stack: the template's ApiUrl output, its stage the template's stage
    _, api = template().api
    variables = deployed["variables"]
    assert variables["stage"]["default"] == api["StageName"]
    assert variables["stage"]["enum"] == [api["StageName"]]
    assert set(variables) == {"apiId", "region", "stage"}
    api_url = template().document["Outputs"]["ApiUrl"]["Value"]["Fn::Sub"]
    expected = (
        api_url.replace("${Api}", "{apiId}")
        .replace("${AWS::Region}", "{region}")
        .replace("${AWS::URLSuffix}", "amazonaws.com")
    )
    assert deployed["url"].replace("{stage}", variables["stage"]["default"]) == expected


def test_the_openapi_document_is_valid_openapi() -> None:
    from openapi_spec_validator import validate

    # A client generated from the document must be able to read it: it validates as OpenAPI.
    validate(_document())


# --- the document says what the server accepts and answers -----------------------------------------

# Every status each operation can answer: its success, its handler's errors, its authorizer's 401 and
# the 429 and 500 every handler can give. docs/api.md gives the same table ("Statuses of each call").
STATUSES: dict[tuple[str, str], set[int]] = {
    ("POST", "/token"): {200, 400, 401, 429, 500},
    ("GET", "/.well-known/jwks.json"): {200, 429, 500},
    ("POST", "/v3/start"): {200, 400, 401, 403, 409, 422, 429, 500},
    ("POST", "/v3/validate"): {200, 400, 401, 403, 429, 500},
    ("POST", "/v3/challenge"): {200, 400, 401, 403, 429, 500},
    ("POST", "/v3/complete"): {200, 400, 401, 403, 429, 500},
    ("POST", "/v3/unify"): {200, 400, 401, 403, 429, 500},
    ("POST", "/v3/unify-status"): {200, 400, 401, 403, 429, 500},
    ("POST", "/v3/unify-bind"): {200, 400, 401, 403, 429, 500},
    ("POST", "/v3/device/revoke"): {200, 400, 401, 404, 409, 422, 429, 500},
    ("POST", "/v3/verify"): {200, 400, 401, 403, 409, 422, 429, 500},
    ("POST", "/v3/verify/batch"): {200, 400, 401, 409, 422, 429, 500},
    ("POST", "/v3/identity"): {200, 400, 401, 403, 409, 422, 429, 500},
    ("GET", "/v3/identity"): {200, 400, 401, 429, 500},
    ("POST", "/v3/identity/batch"): {200, 400, 401, 409, 422, 429, 500},
    ("GET", "/v3/identity/{id}"): {200, 400, 401, 404, 429, 500},
    ("DELETE", "/v3/identity/{id}"): {200, 400, 401, 404, 429, 500},
    ("POST", "/v3/identity/{id}/activate"): {200, 400, 401, 404, 429, 500},
    ("POST", "/v3/identity/{id}/deactivate"): {200, 400, 401, 404, 429, 500},
    ("GET", "/v3/identity/{id}/lookup"): {200, 400, 401, 403, 404, 429, 500},
    ("GET", "/v3/decisions"): {200, 400, 401, 403, 429, 500},
    ("GET", "/v3/decisions/summary"): {200, 400, 401, 429, 500},
    ("GET", "/v3/decisions/{id}"): {200, 400, 401, 404, 429, 500},
    ("DELETE", "/v3/decisions"): {200, 400, 401, 403, 429, 500},
    ("POST", "/client/v1/session"): {200, 400, 401, 403, 429, 500},
    ("POST", "/client/v1/mobile-auth"): {200, 400, 401, 403, 429, 500},
    ("GET", "/client/v1/mobile-auth/callback"): {200, 400, 403, 429, 500},
    ("POST", "/client/v1/otp"): {200, 400, 401, 403, 429, 500},
    ("POST", "/client/v1/otp/verify"): {200, 400, 401, 403, 429, 500},
    ("POST", "/client/v1/instant-link"): {200, 400, 401, 403, 429, 500},
    ("POST", "/client/v1/device-key"): {200, 400, 401, 403, 429, 500},
    ("POST", "/client/v1/device-key/register"): {200, 400, 401, 403, 429, 500},
    ("GET", "/l/{token}"): {302, 410, 429, 500},
    ("POST", "/operator/v1/notifications"): {204, 400, 401, 410, 429, 500},
}
_API_MD = openapi_path().parent / "api.md"


def test_each_operation_lists_exactly_the_statuses_it_can_answer() -> None:
    # The handler's own (404 of a device revoke, 410 of a used link), its authorizer's, the edge's
    documented = {
        key: {int(status) for status in op["responses"]} for key, op in _operations(_document()).items()
    }
    assert documented == STATUSES


def test_the_statuses_are_the_ones_docs_api_md_gives() -> None:
    # The table of docs/api.md's "Statuses of each call": `METHOD /path` | 200, 400, ...
    section = _API_MD.read_text().split("### Statuses of each call", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(GET|POST|DELETE) ([^`]+)` \| ([0-9, ]+) \|$", section, re.MULTILINE)
    table = {(method, path): {int(s) for s in statuses.split(",")} for method, path, statuses in rows}
    assert table == STATUSES


# The write routes that honour Idempotency-Key (docs/api.md#retries-with-an-idempotency-key).
KEYED = {
    ("POST", "/v3/start"),
    ("POST", "/v3/verify"),
    ("POST", "/v3/verify/batch"),
    ("POST", "/v3/identity"),
    ("POST", "/v3/identity/batch"),
    ("POST", "/v3/device/revoke"),
}


def test_exactly_the_six_write_routes_declare_the_idempotency_key_header() -> None:
    # Given every operation's header parameters
    declaring = {
        key
        for key, operation in _operations(_document()).items()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "header" and parameter["name"] == "Idempotency-Key"
    }

    # Then the six write routes, and only they, declare it, optional, with its rule
    assert declaring == KEYED
    verify = _operations(_document())[("POST", "/v3/verify")]
    parameter = next(p for p in verify["parameters"] if p["name"] == "Idempotency-Key")
    assert parameter["required"] is False
    assert re.fullmatch(parameter["schema"]["pattern"], '"8e03978e-40d5-43e8-bc93-6894a57f9324"')
    # the pattern takes what the server reads as a key, and nothing it refuses
    for sent in ("8e03978e", '"8e03978e"', "k" * 255, "A-z_0.9:+/="):
        assert re.search(parameter["schema"]["pattern"], sent), sent
        assert parse_key([sent]) == sent.strip('"')
    for sent in ("two words", '"open', 'close"', "", '""', "k" * 256, "a,b"):
        assert not re.search(parameter["schema"]["pattern"], sent), sent
        with pytest.raises(MalformedRequest):
            parse_key([sent])


def test_every_post_declares_the_body_it_requires() -> None:
    # Every POST but /token must carry a JSON object (mobile-auth reads nothing from it, yet needs it)
    for (method, path), operation in _operations(_document()).items():
        if method != "POST":
            continue
        body = operation["requestBody"]
        assert body["required"] is True, path
        media = {
            "/token": "application/x-www-form-urlencoded",
            "/operator/v1/notifications": "application/cloudevents+json",
        }.get(path, "application/json")
        assert list(body["content"]) == [media], path
    mobile_auth = _operations(_document())[("POST", "/client/v1/mobile-auth")]["requestBody"]
    assert mobile_auth["content"]["application/json"]["schema"]["type"] == "object"


def test_the_token_form_has_the_fields_of_each_grant() -> None:
    form = _operations(_document())[("POST", "/token")]["requestBody"]["content"]
    grants = {
        schema["properties"]["grant_type"]["const"]: schema
        for schema in form["application/x-www-form-urlencoded"]["schema"]["oneOf"]
    }
    # As services/tokens.py reads them: the secret is required for client_credentials, the refresh
    # token for refresh_token (with an optional secret, checked when not empty)
    assert grants["client_credentials"]["required"] == ["grant_type", "client_id", "client_secret"]
    assert grants["refresh_token"]["required"] == ["grant_type", "client_id", "refresh_token"]
    assert set(grants["refresh_token"]["properties"]) == {
        "grant_type",
        "client_id",
        "refresh_token",
        "client_secret",
    }


# A value each patterned (or formatted) field allows, and values it forbids: keyed by field name, or by
# schema and field where one schema's field differs. A field the document gains needs its line here.
_EXAMPLES: dict[str, tuple[str, list[str]]] = {
    "correlationId": ("5b9d3d43-7696-4c77-9920-ec792a48005e", ["5B9D3D43-7696-4C77-9920-EC792A48005E", "x"]),
    "dob": (
        "1999-08-08",
        ["00-25", "13-01", "1999-02-30", "1899-12-31", "19990808", "\u0661\u0669\u0669\u0669-08"],
    ),
    "Individual.dob": ("1999-08-08", ["1999-08", "08-08", "1999-02-30"]),
    "ssn": (
        "123-45-6789",
        ["000456789", "666-45-6789", "123006789", "123450000", "0000", "12345", "12-345-6789"],
    ),
    "Individual.ssn": ("6789", ["0000", "000-45-6789"]),
    "deviceId": ("0c91d7be4a714682b75d829e3d9327d8", ["short", "has a space", "x" * 65]),
    "phoneNumber": (
        "+1 (202) 555-0123",
        ["not a number", "1+1", "+1 202 555 0123 ext 9", "tel:+12025550123"],
    ),
    "emailAddresses": ("kira.petrova@example.com", ["no-at-sign", "two@@example.com"]),
    "emailAddress": ("lena.ortiz@example.com", ["lena@localhost", "lena ortiz@example.com"]),
    "signature": ("A" * 86, ["A" * 79, "+" * 86]),
    "otp": ("1234", ["123", "12a4", "1234567", "\u0661\u0662\u0663\u0664"]),
    "finalTargetUrl": ("https://shop.example/verified?x=1", ["0", "ftp://shop.example", "https://a b"]),
    "smsMessage": ("Your code is ####.", ["no placeholder", "### short", "#### and ####", "{code} ####"]),
}
_FORMATS = {"date": date.fromisoformat}


def _models() -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    modules = (
        models,
        staged_models,
        token_models,
        unify_models,
        client_models,
        identity_models,
        verify_models,
    )
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                found[value.__name__] = value
    return found


def _constrained_fields() -> list[tuple[str, str, dict[str, Any], bool]]:
    """(schema, field, the string schema with a pattern or format, whether it is a list's items)."""
    found = []
    for name, schema in _document()["components"]["schemas"].items():
        for field, prop in schema.get("properties", {}).items():
            for branch in prop.get("anyOf", [prop]):
                items = branch.get("type") == "array"
                string = branch.get("items", {}) if items else branch
                if "pattern" in string or "format" in string:
                    found.append((name, field, string, items))
    return found


def _accepts(schema: str, field: str, value: str, items: bool) -> bool:
    info = _models()[schema].model_fields[field]
    try:
        TypeAdapter(info.rebuild_annotation()).validate_python([value] if items else value)
    except ValidationError:
        return False
    return True


def _allows(string: dict[str, Any], value: str) -> bool:
    """What the document allows: JSON Schema's pattern (unanchored search) and format."""
    if "pattern" in string and not re.search(string["pattern"], value):
        return False
    try:
        _FORMATS.get(string.get("format", ""), str)(value)
    except ValueError:
        return False
    return True


def test_patterns_appear_only_in_the_request_schemas_the_models_make() -> None:
    # Parameters carry none but the Idempotency-Key header (its own test above): the checks below
    # reach every other pattern the document has
    text = json.dumps(_document())
    keyed = len(KEYED)
    assert text.count('"pattern"') == keyed + len([f for f in _constrained_fields() if "pattern" in f[2]])


@pytest.mark.parametrize(
    ("schema", "field", "string", "items"), _constrained_fields(), ids=lambda v: str(v)[:30]
)
def test_each_pattern_or_format_allows_what_the_model_accepts_and_forbids_what_it_refuses(
    schema: str, field: str, string: dict[str, Any], items: bool
) -> None:
    # Every pattern compiles as a regular expression (and is anchored: JSON Schema searches)
    if "pattern" in string:
        re.compile(string["pattern"])
        assert string["pattern"].startswith("^")
        assert string["pattern"].endswith("$")

    # A value the document allows is accepted by the model; each it forbids is refused
    allowed, forbidden = _EXAMPLES.get(f"{schema}.{field}") or _EXAMPLES[field]
    assert _allows(string, allowed)
    assert _accepts(schema, field, allowed, items)
    for value in forbidden:
        assert not _allows(string, value), value
        assert not _accepts(schema, field, value, items), value


# Rules the document states in words, beyond the pattern: no date of birth after today, 02-29 only
# of a leap year. The model may refuse a value the pattern allows only for these.
def _possible_dob(value: str) -> bool:
    parts = [int(part) for part in value.split("-")]
    today = datetime.now(UTC).date()
    try:
        if len(parts) == 3:
            return date(*parts) <= today
    except ValueError:
        return False
    return len(value) == 5 or (parts[0], parts[1]) <= (today.year, today.month)


@pytest.mark.parametrize(
    ("schema", "field", "string", "items"),
    [f for f in _constrained_fields() if "pattern" in f[2]],
    ids=lambda v: str(v)[:30],
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_model_enforces_the_pattern_the_document_shows(
    schema: str, field: str, string: dict[str, Any], items: bool, data: st.DataObject
) -> None:
    pattern = string["pattern"]
    # Any value of the pattern is accepted (within the field's length)...
    value = data.draw(
        st.from_regex(pattern, fullmatch=True).filter(lambda v: len(v) <= string.get("maxLength", 10**6))
    )
    if string.get("minLength", 0) <= len(value):
        expected = _possible_dob(value) if field == "dob" else True
        assert _accepts(schema, field, value, items) is expected, value

    # ...and any printable text outside it is refused
    other = data.draw(st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40))
    if not re.search(pattern, other):
        assert not _accepts(schema, field, other, items), other
