"""Bodies and failures built to take a handler down never leave the error mapper: nesting past the
limit, fields sent twice and JSON under another Content-Type are 400/8001, and an unexpected
exception anywhere in the shared entrypoint is 500/8000 with a logged reference (never API Gateway's
bare 502)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from phoneid.api import http
from phoneid.api.jsonbody import MAX_DEPTH
from tests.harness import Api, LogRecorder, load_event
from tests.integration.test_possession_sandbox import start
from tests.sandbox_numbers import OTP_PASS, TOKEN_ONLY

START = {"flowType": "mobile", "phoneNumber": TOKEN_ONLY}
TOO_DEEP = {
    "code": 8001,
    "message": f"Malformed request: body nests arrays and objects over {MAX_DEPTH} levels deep",
}
NOT_JSON_TYPE = {"code": 8001, "message": "Malformed request: Content-Type must be application/json"}
MALFORMED = {"code": 8001}
SECRET = "table phoneid-sessions is on fire at /var/task/app.py"
V3_POSTS = ["/v3/start", "/v3/validate", "/v3/complete", "/v3/unify", "/v3/verify", "/v3/identity"]


def nested_arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def with_field_nested(depth: int) -> str:
    """START plus a field ``x`` whose value brings the body's nesting to ``depth`` (the object is 1)."""
    return json.dumps(START)[:-1] + ', "x": ' + nested_arrays(depth - 1) + "}"


def as_client(api: Api, path: str, text: str, token: str, **headers: str) -> Any:
    return api.post(path, text, token=token, **headers)


# ---------------------------------------------------------------- nesting


@pytest.mark.parametrize("path", [*V3_POSTS, "/v3/verify/batch", "/v3/identity/batch"])
def test_a_thousand_nested_arrays_are_400_8001_on_every_v3_call(api: Api, path: str) -> None:
    integrator = api.integrator()

    refused = integrator.post(path, nested_arrays(1000))

    assert refused.status == 400
    assert refused.json() == TOO_DEEP


def test_a_thousand_nested_arrays_are_400_8001_on_the_client_api(api: Api) -> None:
    _, device = start(api.integrator(), OTP_PASS)

    refused = as_client(api, "/client/v1/otp", nested_arrays(1000), device.auth_token)

    assert refused.status == 400
    assert refused.json() == TOO_DEEP
    assert refused.headers["Access-Control-Allow-Origin"] == "*"


def test_deeply_nested_objects_in_a_large_batch_body_are_400_8001(api: Api) -> None:
    integrator = api.integrator()
    text = '{"items": ' + '{"a": ' * 20_000 + "1" + "}" * 20_000 + "}"  # ~140 KB, under the 1 MiB limit

    refused = integrator.post("/v3/verify/batch", text)

    assert refused.status == 400
    assert refused.json() == TOO_DEEP


def test_nesting_up_to_the_limit_is_read_and_one_level_more_is_refused(api: Api) -> None:
    integrator = api.integrator()

    at_limit = integrator.post("/v3/start", with_field_nested(MAX_DEPTH))
    over_limit = integrator.post("/v3/start", with_field_nested(MAX_DEPTH + 1))

    # At the limit the body is read: the answer is about its unknown field, not its depth.
    assert at_limit.status == 400
    assert at_limit.json()["message"] == "Invalid parameters: x: Extra inputs are not permitted"
    assert over_limit.json() == TOO_DEEP


def test_brackets_inside_strings_are_text_not_nesting(api: Api) -> None:
    integrator = api.integrator()

    accepted = integrator.start(phoneNumber=TOKEN_ONLY, clientRequestId='[{"[' * 30)

    assert accepted.status == 200


# ---------------------------------------------------------------- fields sent twice


def test_a_field_sent_twice_is_400_8001_naming_it_and_starts_no_flow(api: Api) -> None:
    integrator = api.integrator()
    text = f'{{"flowType": "mobile", "phoneNumber": "+12025550101", "phoneNumber": "{TOKEN_ONLY}"}}'

    refused = integrator.post("/v3/start", text)

    assert refused.status == 400
    assert refused.json() == {**MALFORMED, "message": "Invalid parameters: phoneNumber: must appear once"}
    assert api.table_items("SessionsTable") == []


def test_a_field_sent_twice_deep_inside_the_body_is_named(api: Api) -> None:
    integrator = api.integrator()
    text = (
        '{"correlationId": "5b9d3d43-7696-4c77-9920-ec792a48005e", "clientRequestId": "order-3",'
        ' "individual": {"firstName": "Kira", "address": {"city": "A", "city": "B"}}}'
    )

    refused = integrator.post("/v3/complete", text)

    assert refused.status == 400
    # The ids that were sent once are still echoed.
    assert refused.json() == {
        "code": 8001,
        "message": "Invalid parameters: city: must appear once",
        "clientRequestId": "order-3",
        "correlationId": "5b9d3d43-7696-4c77-9920-ec792a48005e",
    }


def test_a_client_request_id_sent_twice_is_not_echoed(api: Api) -> None:
    integrator = api.integrator()
    text = json.dumps(START)[:-1] + ', "clientRequestId": "a", "clientRequestId": "b"}'

    refused = integrator.post("/v3/start", text)

    assert refused.json() == {**MALFORMED, "message": "Invalid parameters: clientRequestId: must appear once"}


def test_a_field_sent_twice_to_the_client_api_is_400_8001(api: Api) -> None:
    _, device = start(api.integrator(), OTP_PASS)
    assert device.call("/otp").status == 200

    refused = as_client(api, "/client/v1/otp/verify", '{"otp": "0000", "otp": "1234"}', device.auth_token)

    assert refused.status == 400
    assert refused.json() == {**MALFORMED, "message": "Invalid parameters: otp: must appear once"}
    assert device.session()["status"] == "pending"


# ---------------------------------------------------------------- Content-Type


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonx",
    ],
)
def test_json_sent_as_another_type_is_400_8001(api: Api, content_type: str) -> None:
    integrator = api.integrator()

    refused = integrator.post("/v3/start", {**START, "clientRequestId": "order-5"}, content_type=content_type)

    assert refused.status == 400
    assert refused.json() == {**NOT_JSON_TYPE, "clientRequestId": "order-5"}
    assert api.table_items("SessionsTable") == []


@pytest.mark.parametrize("path", ["/v3/start", "/client/v1/session"])
def test_json_sent_with_no_content_type_is_400_8001(api: Api, path: str) -> None:
    integrator = api.integrator()
    _, device = start(integrator, OTP_PASS)
    token = integrator.access_token if path.startswith("/v3") else device.auth_token

    refused = api.request("POST", path, json.dumps(START), {"authorization": f"Bearer {token}"})

    assert refused.status == 400
    assert refused.json() == NOT_JSON_TYPE


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "APPLICATION/JSON;charset=UTF-8"]
)
def test_application_json_is_read_in_any_case_and_with_parameters(api: Api, content_type: str) -> None:
    integrator = api.integrator()

    accepted = integrator.post("/v3/start", START, content_type=content_type)

    assert accepted.status == 200


def test_a_get_without_a_body_needs_no_content_type(api: Api) -> None:
    integrator = api.integrator()

    listed = api.request("GET", "/v3/identity", None, {"authorization": f"Bearer {integrator.access_token}"})

    assert listed.status == 200


# ---------------------------------------------------------------- bodies that are not text


def _with_body(event: dict[str, Any], body: str) -> dict[str, Any]:
    return {**event, "body": body}


def test_a_form_that_is_not_text_is_400_8001_at_the_token_endpoint(api: Api) -> None:
    event = load_event("token/client_credentials.json")

    result = api.invoke("TokenFunction", _with_body(event, "grant_type=client_credentials&client_id=\ud800"))

    assert result["statusCode"] == 400
    assert json.loads(result["body"])["message"] == "Malformed request: body is not form-encoded"
    assert json.loads(result["body"])["code"] == 8001


def test_a_json_body_that_is_not_text_is_400_8001(api: Api) -> None:
    integrator = api.integrator()
    event = load_event("start/mobile.json", {"0123456789abcdef0123456789abcdef": integrator.client_id})

    result = api.invoke("StartFunction", _with_body(event, '{"flowType": "mobile\ud800"}'))

    assert result["statusCode"] == 400
    assert json.loads(result["body"]) == {**MALFORMED, "message": "Malformed request: body is not valid JSON"}


# ---------------------------------------------------------------- anything unexpected


def _explode(*_args: object, **_kwargs: object) -> Any:
    raise RecursionError(SECRET)


def _in_the_rate_limit(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(api.container.rate_limit), "check", _explode)


def _in_the_body_checks(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "_as_json", _explode)


def _in_the_resolver(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(APIGatewayRestResolver, "resolve", _explode)


def _in_the_resolvers_error_mapper(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    # The handler fails, and so does the mapping of that failure inside the resolver.
    monkeypatch.setattr(type(api.container.staged), "start", _explode)
    original = http._logged_unexpected
    calls: list[BaseException] = []

    def first_call_fails(error: BaseException) -> Any:
        calls.append(error)
        if len(calls) == 1:
            raise RuntimeError(SECRET)
        return original(error)

    monkeypatch.setattr(http, "_logged_unexpected", first_call_fails)


def _in_the_decorators(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http.metrics, "clear_metrics", _explode)


@pytest.mark.parametrize(
    "where",
    [
        _in_the_rate_limit,
        _in_the_body_checks,
        _in_the_resolver,
        _in_the_resolvers_error_mapper,
        _in_the_decorators,
    ],
)
def test_an_unexpected_exception_anywhere_in_the_entrypoint_is_500_8000_with_a_logged_reference(
    api: Api,
    logged: LogRecorder,
    monkeypatch: pytest.MonkeyPatch,
    where: Callable[[Api, pytest.MonkeyPatch], None],
) -> None:
    integrator = api.integrator()
    assert integrator.access_token  # before anything breaks
    where(api, monkeypatch)

    failed = integrator.start(**START, clientRequestId="order-9")

    assert failed.status == 500
    body = failed.json()
    assert set(body) == {"code", "message", "clientRequestId"}
    assert body["code"] == 8000
    assert body["clientRequestId"] == "order-9"
    reference = body["message"].rsplit("reference ", 1)[1].rstrip(")")
    assert any("unexpected error" in line and reference in line for line in logged.lines)
    assert not [line for line in logged.lines if "on fire" in line]
    assert "on fire" not in failed.body


def test_an_unexpected_exception_on_the_client_api_is_500_8000_a_browser_can_read(
    api: Api, logged: LogRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, device = start(api.integrator(), OTP_PASS)
    monkeypatch.setattr(APIGatewayRestResolver, "resolve", _explode)

    failed = device.call("/session")

    assert failed.status == 500
    assert failed.json()["code"] == 8000
    assert failed.headers["Access-Control-Allow-Origin"] == "*"
    assert any("unexpected error" in line for line in logged.lines)
    assert not [line for line in logged.lines if "on fire" in line]


def test_an_unexpected_exception_at_the_token_endpoint_is_500_8000(
    api: Api, logged: LogRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials = api.create_client()
    _in_the_rate_limit(api, monkeypatch)

    failed = api.token_response(credentials.token_form())

    assert failed.status == 500
    assert failed.json()["code"] == 8000
    assert not [line for line in logged.lines if "on fire" in line]


# ---------------------------------------------------------------- odd characters in the path


@pytest.mark.parametrize("token", ["\x00", "\u202e", "a\x7fb"])
def test_a_link_token_with_characters_no_link_has_is_the_unknown_link_page(
    api: Api, logged: LogRecorder, token: str
) -> None:
    # GET /l/%00 and /l/%E2%80%AE: API Gateway gives the handler the path decoded
    opened = api.request("GET", f"/l/{token}", None, {})

    assert opened.status == 410
    assert "This link can no longer be used" in opened.body
    assert not [line for line in logged.lines if '"levelname": "ERROR"' in line]


def test_a_path_parameter_with_characters_no_value_has_is_400_8001(api: Api, logged: LogRecorder) -> None:
    integrator = api.integrator()

    refused = api.request(
        "GET", "/v3/identity/\x00", None, {"authorization": f"Bearer {integrator.access_token}"}
    )

    assert refused.status == 400
    assert refused.json() == {
        "code": 8001,
        "message": "Malformed request: the path holds characters no parameter may have",
    }
    assert not [line for line in logged.lines if '"levelname": "ERROR"' in line]
