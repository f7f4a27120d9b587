"""docs/openapi.json describes every answer's fields, as the answers are sent: the SDKs' types are
generated from it (docs/adr/0107-the-typescript-server-sdk.md), and the fuzzer checks answers against it."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from phoneid.api.identity_models import IdentityListResponse
from phoneid.api.verify_models import VerifyBatchResponse
from phoneid_dev.openapi import openapi_path

CORRELATION_ID = "5b9d3d43-7696-4c77-9920-ec792a48005e"


def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(openapi_path().read_text())
    return document


def _answers() -> dict[str, dict[str, Any]]:
    """The schema of each server operation's JSON 200 (/token and /v3: what the SDKs call), by
    'METHOD path'."""
    answers = {}
    for path, item in _document()["paths"].items():
        if not path.startswith(("/token", "/v3/")):
            continue
        for method, operation in item.items():
            content = operation.get("responses", {}).get("200", {}).get("content", {})
            if "application/json" in content:
                answers[f"{method.upper()} {path}"] = content["application/json"]["schema"]
    return answers


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" not in schema:
        return schema
    resolved: dict[str, Any] = _document()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return resolved


@pytest.mark.parametrize("operation", sorted(_answers()))
def test_each_answer_names_its_fields(operation: str) -> None:
    # Each 200 lists the fields the handler's model sends, not "any object"
    schema = _resolved(_answers()[operation])

    assert schema.get("properties"), f"{operation}: the answer's fields are not described"
    assert schema.get("additionalProperties") is not True


def _answer_schemas() -> set[str]:
    """The names of the schemas the answers are made of: each 200's, and those they refer to."""
    schemas = _document()["components"]["schemas"]
    names: set[str] = set()
    waiting = [json.dumps(schema) for schema in _answers().values()]
    while waiting:
        for name in re.findall(r'"#/components/schemas/([^"]+)"', waiting.pop()):
            if name not in names:
                names.add(name)
                waiting.append(json.dumps(schemas[name]))
    return names


def test_no_answer_requires_a_field_that_is_left_out_when_empty() -> None:
    # Lists and objects are left out of answers when empty (docs/api.md, Conventions)
    schemas = _document()["components"]["schemas"]
    for name in sorted(_answer_schemas()):
        schema = schemas[name]
        for field in schema.get("required", []):
            kinds = [schema["properties"][field], *schema["properties"][field].get("anyOf", [])]
            assert not any(kind.get("type") in ("array", "object") for kind in kinds), f"{name}.{field}"


@pytest.mark.parametrize(
    ("model", "answer"),
    [
        (IdentityListResponse, IdentityListResponse(results=[])),
        (
            VerifyBatchResponse,
            VerifyBatchResponse(correlationId=CORRELATION_ID, results=[]),
        ),
    ],
)
def test_an_answer_with_empty_lists_is_valid_against_its_schema(model: type[Any], answer: Any) -> None:
    # Given an answer whose lists are empty, serialized as the handlers send it
    sent = json.loads(answer.model_dump_json())
    assert sent == {} or "results" not in sent

    # Then the document's schema of it accepts it
    document = _document()
    schema = {**document["components"]["schemas"][model.__name__], "components": document["components"]}
    jsonschema.validate(sent, schema)
