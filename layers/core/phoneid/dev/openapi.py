"""The API's OpenAPI document, generated from the handlers' models and routes in ``template.yaml``.

``python -m phoneid.dev.openapi`` rewrites ``docs/openapi.json``; a contract test fails when the
committed document drifts from the code.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from phoneid.api.models import ErrorBody
from phoneid.dev.template import ROOT, template

OPENAPI_PATH = ROOT / "docs" / "openapi.json"
LOCAL_URL = "http://127.0.0.1:3000"

_ERRORS = {
    "400": "Malformed request (8001), step out of order (8003), Sandbox user not found (8007)",
    "401": "Missing or invalid credentials, or another tier or region (8002)",
    "403": "Replayed step (8003), invalid correlationId (8008), Sandbox access denied (8009), country (8010)",
    "429": "More than 25 requests per second (8018); see Retry-After",
    "500": "Internal error (8000); retry",
}


_TOKEN_FORM = {
    "required": True,
    "content": {
        "application/x-www-form-urlencoded": {
            "schema": {
                "type": "object",
                "required": ["grant_type", "client_id"],
                "properties": {
                    "grant_type": {"type": "string", "enum": ["client_credentials", "refresh_token"]},
                    "client_id": {"type": "string"},
                    "client_secret": {"type": "string", "description": "required for client_credentials"},
                    "refresh_token": {"type": "string", "description": "required for refresh_token"},
                },
            }
        }
    },
}


def generate() -> dict[str, Any]:
    from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge
    from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

    merge = OpenAPIMerge(
        title="PhoneID API",
        version="3",
        description=(
            "Phone possession and identity verification. The guides are in the repository's docs/; "
            "the local stack (`make dev`) serves this document at /openapi.json and renders it at /docs."
        ),
        security_schemes={
            "accessToken": HTTPBearer(
                bearerFormat="JWT", description="The integrator's access token, from /token"
            ),
            "authToken": HTTPBearer(bearerFormat="JWT", description="The flow's authToken, from /v3/start"),
        },
        on_conflict="error",
    )
    functions = template().functions
    for function_id in sorted({route.function for route in template().routes}):
        merge.add_file(functions[function_id].module_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        document = merge.get_openapi_schema()
    return _shape(document)


def _shape(document: dict[str, Any]) -> dict[str, Any]:
    """Replace the framework's 422 with the service's error responses, and mark authorization."""
    routes = {(route.method.lower(), route.path): route for route in template().routes}
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(name, None)
    schemas["ErrorBody"] = ErrorBody.model_json_schema()
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            responses = {str(status): body for status, body in operation.get("responses", {}).items()}
            operation["responses"] = responses
            responses.pop("422", None)
            for status, description in _ERRORS.items():
                responses[status] = {"description": description, **error}
            route = routes[(method, path)]
            scheme = {"AccessTokenAuthorizer": "accessToken", "FlowTokenAuthorizer": "authToken"}.get(
                route.authorizer or ""
            )
            operation["security"] = [{scheme: []}] if scheme else []
    document["paths"]["/token"]["post"]["requestBody"] = _TOKEN_FORM
    document["servers"] = _servers()
    return document


def _servers() -> list[dict[str, Any]]:
    """The local stack, then a deployed stack's API Gateway URL (the template's ApiUrl output)."""
    _, api = template().api
    stage = str(api["StageName"])
    return [
        {"url": LOCAL_URL, "description": "The local stack (`make dev`; PORT changes the port)"},
        {
            "url": "https://{apiId}.execute-api.{region}.amazonaws.com/{stage}",
            "description": "A deployed stack: its ApiUrl output, printed by `sam deploy`",
            "variables": {
                "apiId": {"default": "your-api-id", "description": "The stack's API Gateway REST API id"},
                "region": {"default": "us-east-1", "description": "The AWS region the stack is deployed to"},
                "stage": {"default": stage, "enum": [stage], "description": "The template's API stage"},
            },
        },
    ]


def render() -> str:
    return json.dumps(generate(), indent=2, sort_keys=True, default=_plain) + "\n"


def _plain(value: Any) -> Any:
    """Framework models (security schemes) as their JSON; enums (parameter locations) as their values."""
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    return getattr(value, "value", str(value))


if __name__ == "__main__":
    OPENAPI_PATH.write_text(render())
    sys.stdout.write(f"wrote {OPENAPI_PATH.relative_to(ROOT)}\n")
