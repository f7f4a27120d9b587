"""The `.http` interpreter the e2e tests send docs/http with: what it reads and how it fills requests."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests import http_collection

COLLECTION = """\
# a comment before everything
@B = http://stack.test
@URL = {{B}}/v3

### first, named
# @name first
POST {{URL}}/start
Content-Type: application/json

{"a": {"b": 1}}

### marked
# @expect 403
# @poll
GET {{B}}/items/{{first.response.body.$.items[1].id}}?n={{first.response.body.$.count}}
Authorization: Bearer {{first.response.body.$.token}}
"""


def test_it_reads_variables_marks_headers_and_bodies() -> None:
    collection = http_collection.parse(COLLECTION)

    assert collection.variables == {"B": "http://stack.test", "URL": "{{B}}/v3"}
    first, marked = collection.requests
    assert (first.title, first.name, first.method, first.expect, first.poll) == (
        "first, named", "first", "POST", None, False,
    )  # fmt: skip
    assert first.headers == [("Content-Type", "application/json")]
    assert first.body == '{"a": {"b": 1}}'
    assert (marked.name, marked.method, marked.expect, marked.poll, marked.body) == (
        None,
        "GET",
        403,
        True,
        "",
    )


def test_requests_are_filled_from_variables_and_earlier_answers() -> None:
    answers = iter([{"token": "t0k", "count": 2, "items": [{"id": "x"}, {"id": "y"}]}, {}])
    sent: list[http_collection.HttpRequest] = []

    def send(request: http_collection.HttpRequest) -> httpx.Response:
        sent.append(request)
        return httpx.Response(403 if request.method == "GET" else 200, json=next(answers))

    http_collection.Run(http_collection.parse(COLLECTION), send).all()

    assert [request.url for request in sent] == [
        "http://stack.test/v3/start",
        "http://stack.test/items/y?n=2",
    ]
    assert sent[1].headers == [("Authorization", "Bearer t0k")]


def test_a_reference_to_an_answer_not_yet_had_is_an_error() -> None:
    collection = http_collection.parse("###\nGET {{later.response.body.$.id}}\n")

    with pytest.raises(KeyError, match="later"):
        http_collection.Run(collection, lambda request: httpx.Response(200)).all()


def test_load_refuses_a_variable_the_file_does_not_have(tmp_path: Path) -> None:
    path = tmp_path / "x.http"
    path.write_text(COLLECTION)

    assert http_collection.load(path, {"B": "http://other"}).variables["B"] == "http://other"
    with pytest.raises(AssertionError, match="TOKEN"):
        http_collection.load(path, {"TOKEN": "t"})
