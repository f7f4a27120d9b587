"""A small interpreter of the `.http` collections in docs/http (VS Code REST Client's format), of just
the part of the format they use, so that a test can send them to a running stack:

- ``@name = value`` lines before the first request: file variables (a value may use others);
- ``###`` (with an optional title) between requests; ``#`` or ``//`` comment lines before the
  request line, among them ``# @name req`` (the answer is kept as ``req``) and ``# @expect NNN``
  (PhoneID's own mark, a comment to the editors: the request answers that error status) and
  ``# @poll`` (ours too: sent again until it answers as expected, for results that come later);
- ``METHOD URL``, header lines, a blank line and the body;
- ``{{variable}}`` and ``{{req.response.body.$.field}}`` (a JSONPath of member names and ``[index]``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

_VARIABLE = re.compile(r"^@(\w+)\s*=\s*(.*)$")
_REFERENCE = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")
_RESPONSE_BODY = re.compile(r"^(\w+)\.response\.body\.(\$.*)$")
_PATH_STEP = re.compile(r"\.(\w+)|\[(\d+)\]")


@dataclass
class HttpRequest:
    title: str
    method: str
    url: str
    headers: list[tuple[str, str]]
    body: str
    name: str | None = None
    expect: int | None = None  # None: any 2xx
    poll: bool = False

    def answered(self, response: httpx.Response) -> bool:
        return response.status_code == self.expect if self.expect else response.is_success


@dataclass
class Collection:
    variables: dict[str, str]
    requests: list[HttpRequest] = field(default_factory=list)


def parse(text: str) -> Collection:
    blocks = re.split(r"^###[^\n]*\n?", text, flags=re.MULTILINE)
    titles = ["", *re.findall(r"^###([^\n]*)", text, flags=re.MULTILINE)]
    variables: dict[str, str] = {}
    for line in blocks[0].splitlines():
        if match := _VARIABLE.match(line.strip()):
            variables[match[1]] = match[2].strip()
    collection = Collection(variables)
    for title, block in zip(titles[1:], blocks[1:], strict=True):
        request = _request(title.strip(), block)
        if request is not None:
            collection.requests.append(request)
    return collection


def _request(title: str, block: str) -> HttpRequest | None:
    lines = block.splitlines()
    name: str | None = None
    expect: int | None = None
    poll = False
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith(("#", "//"))):
        comment = lines.pop(0).strip().lstrip("#/").strip()
        if comment.startswith("@name "):
            name = comment.removeprefix("@name ").strip()
        elif comment.startswith("@expect "):
            expect = int(comment.removeprefix("@expect ").strip())
        elif comment == "@poll":
            poll = True
    if not lines:
        return None
    method, url = lines.pop(0).split()[:2]
    headers: list[tuple[str, str]] = []
    while lines and lines[0].strip():
        header, value = lines.pop(0).split(":", 1)
        headers.append((header.strip(), value.strip()))
    body = "\n".join(lines).strip()
    return HttpRequest(title, method, url, headers, body, name, expect, poll)


@dataclass
class Run:
    """Sends a collection's requests in order, each with what the earlier answers filled in."""

    collection: Collection
    send: Callable[[HttpRequest], httpx.Response]
    answers: dict[str, Any] = field(default_factory=dict)
    poll_seconds: float = 60

    def substitute(self, text: str) -> str:
        return _REFERENCE.sub(lambda match: self._value(match[1]), text)

    def _value(self, reference: str) -> str:
        if reference in self.collection.variables:
            return self.substitute(self.collection.variables[reference])
        found = _RESPONSE_BODY.match(reference)
        if found is None or found[1] not in self.answers:
            raise KeyError(f"{reference}: no such variable or named answer yet")
        value: Any = self.answers[found[1]]
        for member, index in _PATH_STEP.findall(found[2].removeprefix("$")):
            value = value[member] if member else value[int(index)]
        return value if isinstance(value, str) else json.dumps(value)

    def all(self) -> list[tuple[HttpRequest, httpx.Response]]:
        sent = []
        for template in self.collection.requests:
            request = HttpRequest(
                template.title,
                template.method,
                self.substitute(template.url),
                [(name, self.substitute(value)) for name, value in template.headers],
                self.substitute(template.body),
                template.name,
                template.expect,
                template.poll,
            )
            response = self.send(request)
            deadline = time.monotonic() + self.poll_seconds
            while request.poll and not request.answered(response) and time.monotonic() < deadline:
                time.sleep(0.2)  # waiting for the stack's work (a batch's results), not timing it
                response = self.send(request)
            if template.name is not None:
                self.answers[template.name] = response.json()
            sent.append((request, response))
        return sent


def load(path: Path, overrides: Mapping[str, str]) -> Collection:
    """The collection at ``path`` with some file variables set (the stack's URL, the credentials)."""
    collection = parse(path.read_text())
    unknown = set(overrides) - set(collection.variables)
    assert not unknown, f"{path.name} has no variables {sorted(unknown)}"
    collection.variables.update(overrides)
    return collection


def sender(http: httpx.Client) -> Callable[[HttpRequest], httpx.Response]:
    def send(request: HttpRequest) -> httpx.Response:
        return http.request(
            request.method, request.url, headers=request.headers, content=request.body.encode()
        )

    return send
