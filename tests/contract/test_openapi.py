"""docs/openapi.json: generated from the code, valid OpenAPI, and exactly the routes template.yaml serves."""

from __future__ import annotations

import json
from typing import Any

from phoneid.dev.openapi import OPENAPI_PATH, render
from phoneid.dev.template import template

_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}

# What a client must send for each of the template's authorizers: the document's security scheme.
_SCHEME_OF_AUTHORIZER = {"AccessTokenAuthorizer": "accessToken", "FlowTokenAuthorizer": "authToken"}


def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(OPENAPI_PATH.read_text())
    return document


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method.upper(), path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in _METHODS
    }


def test_committed_openapi_document_matches_the_code() -> None:
    # Regenerate with: python -m phoneid.dev.openapi
    assert OPENAPI_PATH.read_text() == render()


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
        operation = operations[(route.method, route.path)]
        assert "422" not in operation["responses"]
        assert operation["responses"]["400"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorBody"
        }


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
