"""The API's 4,096-byte body limit at its edge, both sides, counted in bytes (docs/mutation.md).

tests/integration/test_edge.py sends the same bodies through a handler; here the edge's own checks
are asked directly, for JSON bodies and for the token endpoint's form.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from phoneid.api.http import MAX_BODY_BYTES, _check_json_body, parse_form
from phoneid.domain.errors import MalformedRequest


def event_of(body: str) -> dict[str, Any]:
    return {"body": body, "headers": {"Content-Type": "application/json"}, "isBase64Encoded": False}


def json_of_bytes(size: int, *, filler: str = " ") -> str:
    """A JSON object of exactly ``size`` bytes in UTF-8, padded with ``filler`` inside a string."""
    bare = json.dumps({"pad": ""})
    room = size - len(bare.encode())
    width = len(filler.encode())
    text = json.dumps({"pad": filler * (room // width) + " " * (room % width)}, ensure_ascii=False)
    assert len(text.encode()) == size
    return text


def test_the_limit_is_4096_bytes() -> None:
    assert MAX_BODY_BYTES == 4096


def test_a_json_body_of_exactly_4096_bytes_is_read() -> None:
    _check_json_body(event_of(json_of_bytes(4096)))


def test_a_json_body_of_4097_bytes_is_refused_naming_the_limit() -> None:
    with pytest.raises(MalformedRequest) as raised:
        _check_json_body(event_of(json_of_bytes(4097)))
    assert (raised.value.code, raised.value.http_status) == (8001, 400)
    assert str(raised.value) == "Malformed request: body is over 4096 bytes"


def test_the_limit_counts_bytes_not_characters() -> None:
    # Given 4,097 bytes of mostly two-byte characters: fewer than 4,096 characters
    body = json_of_bytes(4097, filler="é")
    assert len(body) < 4096

    # Then it is over the limit, and 4,096 bytes of the same is not
    with pytest.raises(MalformedRequest, match="over 4096 bytes"):
        _check_json_body(event_of(body))
    _check_json_body(event_of(json_of_bytes(4096, filler="é")))


def test_a_route_with_a_larger_limit_reads_up_to_it() -> None:
    _check_json_body(event_of(json_of_bytes(8192)), max_body_bytes=8192)
    with pytest.raises(MalformedRequest, match="over 8192 bytes"):
        _check_json_body(event_of(json_of_bytes(8193)), max_body_bytes=8192)


def form_of_bytes(size: int) -> str:
    prefix = "grant_type=client_credentials&client_id="
    return prefix + "a" * (size - len(prefix))


def test_a_form_of_exactly_4096_bytes_is_read_and_4097_refused() -> None:
    assert parse_form(form_of_bytes(4096))["grant_type"] == "client_credentials"
    with pytest.raises(MalformedRequest, match="over 4096 bytes"):
        parse_form(form_of_bytes(4097))


# --- what else the edge refuses before a route reads the body ----------------------------------------


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({**event_of("{}"), "isBase64Encoded": True}, "body must be JSON text"),
        ({**event_of("{}"), "body": {"a": 1}}, "body must be JSON text"),
        (
            {**event_of("{}"), "headers": {"content-type": "text/plain"}},
            "Content-Type must be application/json",
        ),
        ({**event_of("{}"), "headers": {}}, "Content-Type must be"),
        (event_of("[]"), "body must be a JSON object"),
        (event_of('"\ud800"'), "not valid JSON"),
    ],
)
def test_a_body_that_is_not_a_json_object_is_refused(event: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedRequest, match=message):
        _check_json_body(event)


def test_json_declared_with_parameters_and_in_any_case_is_read() -> None:
    _check_json_body({**event_of("{}"), "headers": {"content-type": "Application/JSON; charset=utf-8"}})


@pytest.mark.parametrize("body", ["a=1&a=2", "grant_type=x&grant_type=y"])
def test_a_form_naming_a_field_twice_is_refused(body: str) -> None:
    with pytest.raises(MalformedRequest):
        parse_form(body)


def test_an_empty_form_is_no_fields() -> None:
    assert parse_form(None) == {}
    assert parse_form("") == {}


@pytest.mark.parametrize("body", ["a=\ud800", "a=%ZZ&b", "a", b"a=1"])
def test_a_form_that_is_not_form_encoded_text_is_refused(body: object) -> None:
    with pytest.raises(MalformedRequest, match="not form-encoded"):
        parse_form(body)  # type: ignore[arg-type]


def test_a_form_keeps_its_blank_fields() -> None:
    assert parse_form("grant_type=client_credentials&client_secret=") == {
        "grant_type": "client_credentials",
        "client_secret": "",
    }
