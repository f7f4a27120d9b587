"""The API's OpenAPI document, generated from the handlers' models and routes in ``template.yaml``.

``python -m phoneid_dev.openapi`` rewrites ``docs/openapi.json``; a contract test fails when the
committed document drifts from the code.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from phoneid.api.models import ErrorBody
from phoneid.domain.idempotency import HEADER, KEY_RULE, MAX_KEY_LENGTH
from phoneid_dev.static import openapi_path
from phoneid_dev.template import repository_root, template

LOCAL_URL = "http://127.0.0.1:3000"

# What each error code means, for the descriptions of the statuses below (docs/api.md, Errors).
_CODES = {
    8000: "internal error; retry",
    8001: "malformed request",
    8002: "unauthorized",
    8003: "step out of order or possession limit",
    8007: "Sandbox user not found",
    8008: "invalid correlationId",
    8009: "Sandbox access denied",
    8010: "unauthorized for country",
    8011: "not found (410: the subscription has ended)",
    8018: "too many requests; see Retry-After",
    8019: "device revoked",
    8020: "a request under this Idempotency-Key is still in progress",
    8021: "the Idempotency-Key was used for another request",
    9100: "possession incomplete",
}
_Codes = dict[int, tuple[int, ...]]
_EDGE: _Codes = {429: (8018,), 500: (8000,)}  # every handler: the rate limit, and unexpected errors
_V3: _Codes = {400: (8001,), 401: (8002,), **_EDGE}  # a JSON body behind the access token's authorizer
_STEP = {**_V3, 400: (8001, 8003), 403: (8003, 8008)}
_STARTING = {**_V3, 400: (8001, 8007), 403: (8009, 8010)}
_SENDING = {**_V3, 400: (8001, 8007), 403: (8003, 8008, 8009, 8010)}
_KEYED: _Codes = {409: (8020,), 422: (8021,)}  # a write under an Idempotency-Key

# The error statuses of each operation, with the codes behind each: the handler's own, its
# authorizer's 401 and the edge's 429 and 500. Kept in step with docs/api.md ("Statuses of each
# call"); tests/contract/test_openapi.py holds both.
ERRORS: dict[tuple[str, str], _Codes] = {
    ("POST", "/token"): _V3,
    ("GET", "/.well-known/jwks.json"): _EDGE,
    ("POST", "/v3/start"): {**_STARTING, **_KEYED},
    ("POST", "/v3/validate"): _STEP,
    ("POST", "/v3/challenge"): _STEP,
    ("POST", "/v3/complete"): _STEP,
    ("POST", "/v3/unify"): _STARTING,
    ("POST", "/v3/unify-status"): {**_V3, 400: (8001, 8003, 9100), 403: (8003, 8008, 8019)},
    ("POST", "/v3/unify-bind"): {**_V3, 400: (8001, 8003, 9100), 403: (8003, 8008, 8019)},
    ("POST", "/v3/device/revoke"): {**_V3, 404: (8011,), **_KEYED},
    ("POST", "/v3/verify"): {**_STARTING, **_KEYED},
    ("POST", "/v3/verify/batch"): {**_V3, **_KEYED},
    ("POST", "/v3/identity"): {**_V3, 403: (8010,), **_KEYED},
    ("GET", "/v3/identity"): _V3,
    ("POST", "/v3/identity/batch"): {**_V3, **_KEYED},
    ("GET", "/v3/identity/{id}"): {**_V3, 404: (8011,)},
    ("DELETE", "/v3/identity/{id}"): {**_V3, 404: (8011,)},
    ("POST", "/v3/identity/{id}/activate"): {**_V3, 404: (8011,)},
    ("POST", "/v3/identity/{id}/deactivate"): {**_V3, 404: (8011,)},
    ("GET", "/v3/identity/{id}/lookup"): {**_V3, 403: (8010,), 404: (8011,)},
    ("GET", "/v3/decisions"): {**_V3, 403: (8010,)},
    ("GET", "/v3/decisions/summary"): _V3,
    ("GET", "/v3/decisions/{id}"): {**_V3, 404: (8011,)},
    ("DELETE", "/v3/decisions"): {**_V3, 403: (8010,)},
    ("POST", "/client/v1/session"): {**_V3, 403: (8003, 8008)},
    ("POST", "/client/v1/mobile-auth"): {**_V3, 403: (8003, 8008)},
    ("GET", "/client/v1/mobile-auth/callback"): {400: (8001,), 403: (8008,), **_EDGE},
    ("POST", "/client/v1/otp"): _SENDING,
    ("POST", "/client/v1/otp/verify"): _STEP,
    ("POST", "/client/v1/instant-link"): _SENDING,
    ("POST", "/client/v1/device-key"): {**_V3, 403: (8002, 8003, 8008, 8019)},
    ("POST", "/client/v1/device-key/register"): {**_V3, 403: (8002, 8003, 8008)},
    ("GET", "/l/{token}"): _EDGE,
    ("POST", "/operator/v1/notifications"): {400: (8001,), 401: (8002,), 410: (8011,), **_EDGE},
}

_NO_STORE = {
    "Cache-Control": {"schema": {"type": "string", "const": "no-store"}},
    "Referrer-Policy": {"schema": {"type": "string", "const": "no-referrer"}},
}
# The Instant Link answers a redirect or a page, never JSON.
_LINK_RESPONSES = {
    "302": {
        "description": "The link is valid: possession is recorded; Location is the flow's finalTargetUrl",
        "headers": {"Location": {"required": True, "schema": {"type": "string"}}, **_NO_STORE},
    },
    "410": {
        "description": "The link is unknown, used, replaced by a newer one or older than 3 minutes",
        "headers": _NO_STORE,
        "content": {"text/html": {"schema": {"type": "string"}}},
    },
}

# The operator's CAMARA notification (docs/webhooks.md#push-before-poll), with the bearer token the
# stack gave its subscription; read as JSON whatever its media type.
_NOTIFICATION = {
    "required": True,
    "description": "A CloudEvents 1.0 notification of at most 4096 bytes, sent with `Authorization: "
    "Bearer <the subscription's sinkCredential accessToken>`",
    "content": {
        "application/cloudevents+json": {
            "schema": {
                "type": "object",
                "required": ["id", "source", "type", "specversion", "time", "data"],
                "properties": {
                    "id": {"type": "string", "minLength": 1, "maxLength": 256},
                    "source": {"type": "string", "minLength": 1, "maxLength": 256},
                    "type": {"type": "string", "minLength": 1, "maxLength": 256},
                    "specversion": {"type": "string", "const": "1.0"},
                    "time": {"type": "string", "format": "date-time"},
                    "datacontenttype": {"type": "string"},
                    "data": {
                        "type": "object",
                        "required": ["subscriptionId"],
                        "properties": {"subscriptionId": {"type": "string", "minLength": 1}},
                    },
                },
            }
        }
    },
}
_NOTIFICATION_TAKEN = {"204": {"description": "Taken, or a repeat of one taken (same source and id)"}}

# A JSON object is required on every POST but /token (phoneid.api.http.entrypoint) even when the
# handler reads nothing from it.
_ANY_OBJECT = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {"type": "object", "description": "A JSON object of at most 4096 bytes; `{}` will do"}
        }
    },
}

# The header of the write routes whose functions keep answers (IDEMPOTENCY_TABLE in the template):
# the key bare or as the draft's quoted string, as phoneid.domain.idempotency.parse_key reads it.
_KEY_CHARACTERS = f"[A-Za-z0-9_.:+/=-]{{1,{MAX_KEY_LENGTH}}}"
_IDEMPOTENCY_KEY = {
    "name": HEADER,
    "in": "header",
    "required": False,
    "description": (
        "Makes a retry safe: the same key and request within 24 hours answer the first answer again; "
        f"another request under the key is 422 (8021), one still running 409 (8020). The key {KEY_RULE}."
    ),
    "schema": {"type": "string", "pattern": f'^({_KEY_CHARACTERS}|"{_KEY_CHARACTERS}")$'},
}

_CLIENT_ID = {"type": "string", "minLength": 1, "maxLength": 128}
# A form field is one string: a name sent twice (a list) is an 8001, even a name the service ignores.
_FORM_FIELD = {"type": "string"}
# As services/tokens.py reads the form: each field once, other fields ignored.
_TOKEN_FORM = {
    "required": True,
    "description": "At most 4096 bytes, each field once; other fields are ignored",
    "content": {
        "application/x-www-form-urlencoded": {
            "schema": {
                "oneOf": [
                    {
                        "title": "client_credentials",
                        "type": "object",
                        "required": ["grant_type", "client_id", "client_secret"],
                        "additionalProperties": _FORM_FIELD,
                        "properties": {
                            "grant_type": {"type": "string", "const": "client_credentials"},
                            "client_id": _CLIENT_ID,
                            "client_secret": {"type": "string", "minLength": 1},
                        },
                    },
                    {
                        "title": "refresh_token",
                        "type": "object",
                        "required": ["grant_type", "client_id", "refresh_token"],
                        "additionalProperties": _FORM_FIELD,
                        "properties": {
                            "grant_type": {"type": "string", "const": "refresh_token"},
                            "client_id": _CLIENT_ID,
                            "refresh_token": {
                                "type": "string",
                                "minLength": 1,
                                "description": "The refresh_token of an earlier answer; single use",
                            },
                            "client_secret": {
                                "type": "string",
                                "description": "Optional; checked when not empty",
                            },
                        },
                    },
                ]
            }
        }
    },
}


# The {id} of the identity calls: the serviceId PhoneID made (a UUID; any other is answered 8011,
# or 8001 when it holds a character no path parameter may have). The lookup's {id} is a phone number.
_PATH_IDS = {
    "/v3/identity/{id}": {"format": "uuid", "description": "The identity's serviceId"},
    "/v3/identity/{id}/activate": {"format": "uuid", "description": "The identity's serviceId"},
    "/v3/identity/{id}/deactivate": {"format": "uuid", "description": "The identity's serviceId"},
    "/v3/identity/{id}/lookup": {
        "description": "The phone number, as in a body's phoneNumber (`+` as `%2B`); the number must "
        "be valid for its country code"
    },
}


def generate() -> dict[str, Any]:
    # Only generating the document needs Powertools' OpenAPI models (pydantic, slow to import): the
    # local stack's pages import this module for ``openapi_path`` alone.
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
            for status, codes in ERRORS[(method.upper(), path)].items():
                described = "; ".join(f"{_CODES[code]} ({code})" for code in codes)
                responses[str(status)] = {"description": described[0].upper() + described[1:], **error}
            if method == "post" and path != "/token":
                operation.setdefault("requestBody", _ANY_OBJECT)
            route = routes[(method, path)]
            scheme = {"AccessTokenAuthorizer": "accessToken", "FlowTokenAuthorizer": "authToken"}.get(
                route.authorizer or ""
            )
            operation["security"] = [{scheme: []}] if scheme else []
            if _keeps_answers(route.function):
                operation.setdefault("parameters", []).append(_IDEMPOTENCY_KEY)
    document["paths"]["/token"]["post"]["requestBody"] = _TOKEN_FORM
    for id_path, id_schema in _PATH_IDS.items():
        for operation in document["paths"][id_path].values():
            for parameter in operation.get("parameters", []):
                if _plain(parameter["in"]) == "path" and parameter["name"] == "id":
                    parameter["schema"] = {**parameter["schema"], **id_schema}
    notifications = document["paths"]["/operator/v1/notifications"]["post"]
    notifications["requestBody"] = _NOTIFICATION
    del notifications["responses"]["200"]
    notifications["responses"].update(_NOTIFICATION_TAKEN)
    link = document["paths"]["/l/{token}"]["get"]["responses"]
    del link["200"]
    link.update(_LINK_RESPONSES)
    document["servers"] = _servers()
    return document


def _keeps_answers(function_id: str) -> bool:
    """The function honours Idempotency-Key: the template gives it the idempotency table."""
    return "IDEMPOTENCY_TABLE" in template().functions[function_id].environment


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
    openapi_path().write_text(render())
    sys.stdout.write(f"wrote {openapi_path().relative_to(repository_root())}\n")
