from phoneid.dev.openapi import OPENAPI_PATH, render


def test_committed_openapi_document_matches_the_code() -> None:
    # Regenerate with: python -m phoneid.dev.openapi
    assert OPENAPI_PATH.read_text() == render()


def test_openapi_covers_every_route_with_the_spec_error_body() -> None:
    import json

    from phoneid.dev.template import template

    document = json.loads(render())
    for route in template().routes:
        operation = document["paths"][route.path][route.method.lower()]
        assert "422" not in operation["responses"]
        assert operation["responses"]["400"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorBody"
        }


def test_the_openapi_document_is_valid_openapi() -> None:
    import json

    from openapi_spec_validator import validate

    # A client generated from the document must be able to read it: it validates as OpenAPI.
    validate(json.loads(OPENAPI_PATH.read_text()))
