"""The Python server SDK (clients/python) keeps up with docs/openapi.json: its generated models are what
the generator makes of the document today, and every server-to-server operation has a method."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import httpx
from phoneid_client import PhoneIdClient, ServerError
from phoneid_client.client import DecisionKind, DecisionOutcome
from phoneid_client.models import (
    ChallengeRequest,
    CompleteRequest,
    DecisionSummaryItem,
    IdentityBatchRequest,
    IdentityEnrollRequest,
    Individual,
    StartRequest,
    UnifyRequest,
    VerifyBatchRequest,
    VerifyRequest,
)

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "python"
GENERATOR = SDK / "tools" / "generate_models.py"
MODELS = SDK / "src" / "phoneid_client" / "models.py"
DOCUMENT = ROOT / "docs" / "openapi.json"

# The browser's calls (the web SDK's), the Instant Link, the operator's notifications and the keys
# are not server-to-server calls.
NOT_SERVER_CALLS = ("/client/", "/l/", "/operator/", "/.well-known/")

SERVICE_ID = "551ef735-5d2e-4c45-b080-c25a128913b3"
CORRELATION_ID = "5b9d3d43-7696-4c77-9920-ec792a48005e"


def test_the_committed_models_are_what_the_generator_makes_of_the_document(tmp_path: Path) -> None:
    regenerated = tmp_path / "models.py"
    subprocess.run(  # noqa: S603 - the repository's own script
        [sys.executable, str(GENERATOR), "--output", str(regenerated)], check=True, cwd=tmp_path
    )

    assert regenerated.read_bytes() == MODELS.read_bytes(), (
        "clients/python's models drifted from docs/openapi.json: run `make sdk-models` and commit"
    )


def test_the_generated_header_names_the_document_and_no_time() -> None:
    header = MODELS.read_text().split("\n\n")[0]

    assert "docs/openapi.json" in header
    assert "make sdk-models" in header
    assert not re.search(r"\d{4}-\d{2}-\d{2}|timestamp", header)


# One call of each method, with the least each needs.
CALLS: dict[str, Callable[[PhoneIdClient], Any]] = {
    "access_token": lambda c: c.access_token(),
    "start": lambda c: c.start(StartRequest(flowType="mobile", phoneNumber="+12025550111")),
    "validate": lambda c: c.validate(CORRELATION_ID),
    "challenge": lambda c: c.challenge(ChallengeRequest(correlationId=CORRELATION_ID, dob="1999-08-08")),
    "complete": lambda c: c.complete(CompleteRequest(correlationId=CORRELATION_ID, individual=Individual())),
    "unify": lambda c: c.unify(UnifyRequest(possessionType="mobile", phoneNumber="+12025550103")),
    "unify_status": lambda c: c.unify_status(CORRELATION_ID),
    "unify_bind": lambda c: c.unify_bind(CORRELATION_ID),
    "revoke_device": lambda c: c.revoke_device("0c91d7be4a714682b75d829e3d9327d8"),
    "verify": lambda c: c.verify(
        VerifyRequest(phoneNumber="+12025550112", verificationType="humanAssurance")
    ),
    "verify_batch": lambda c: c.verify_batch(VerifyBatchRequest(items=[{"phoneNumber": "+12025550112"}])),
    "enroll_identity": lambda c: c.enroll_identity(IdentityEnrollRequest(phoneNumber="+12025550123")),
    "enroll_identities": lambda c: c.enroll_identities(
        IdentityBatchRequest(items=[{"phoneNumber": "+12025550123"}])
    ),
    "list_identities": lambda c: c.list_identities(limit=10, show_inactive=True),
    "get_identity": lambda c: c.get_identity(SERVICE_ID),
    "disenroll_identity": lambda c: c.disenroll_identity(SERVICE_ID),
    "activate_identity": lambda c: c.activate_identity(SERVICE_ID),
    "deactivate_identity": lambda c: c.deactivate_identity(SERVICE_ID),
    "lookup_identities": lambda c: c.lookup_identities("+12025550123"),
    # The list is an iterator: nothing is sent until its first record is asked for
    "list_decisions": lambda c: next(c.list_decisions(kind="verify")),
    "get_decision": lambda c: c.get_decision(f"{CORRELATION_ID}#3"),
    "summarise_decisions": lambda c: c.summarise_decisions(from_="2026-11-01", to="2026-11-30"),
    "erase_decisions": lambda c: c.erase_decisions("+12025550123"),
}


def _server_operations() -> set[tuple[str, str]]:
    paths = json.loads(DOCUMENT.read_text())["paths"]
    return {
        (method.upper(), path)
        for path, operations in paths.items()
        if not path.startswith(NOT_SERVER_CALLS)
        for method in operations
    }


def _operation(request: httpx.Request, operations: set[tuple[str, str]]) -> tuple[str, str]:
    """The document's operation a request is for: its method, and the path template it fills; a
    literal path before a template it also fills (/v3/decisions/summary, not /v3/decisions/{id}),
    as API Gateway routes it."""
    path = request.url.raw_path.decode().split("?")[0]
    for method, template in sorted(operations, key=lambda operation: operation[1].count("{")):
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if method == request.method and re.match(pattern, path):
            return method, template
    raise AssertionError(f"{request.method} {path} is no operation of the document")


def test_every_server_operation_of_the_document_has_a_method_and_each_method_calls_one() -> None:
    operations = _server_operations()
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.url.path == "/token":
            token = {
                "access_token": "t",
                "refresh_token": "r",
                "expires_in": 3600,
                "refresh_expires_in": 86400,
            }
            return httpx.Response(200, json=token)
        return httpx.Response(500, json={"code": 8000, "message": "Internal error; retry the request"})

    called: dict[str, tuple[str, str]] = {}
    http = httpx.Client(transport=httpx.MockTransport(record))
    for name, call in CALLS.items():
        client = PhoneIdClient("https://api.phoneid.test", "client-1", "secret-1", http=http)
        sent.clear()
        with contextlib.suppress(ServerError):  # the fake answers every call but /token with an 8000
            call(client)
        called[name] = _operation(sent[-1], operations)

    # Each method calls its own operation, and every operation has its method
    assert len(set(called.values())) == len(called)
    assert set(called.values()) == operations
    public = {name for name in vars(PhoneIdClient) if not name.startswith("_")} - {"close", "from_env"}
    assert public == set(CALLS)


def test_the_decision_lists_filters_take_the_kinds_and_outcomes_a_record_has() -> None:
    fields = DecisionSummaryItem.model_fields

    assert get_args(DecisionKind) == get_args(fields["kind"].annotation)
    assert get_args(DecisionOutcome) == get_args(fields["outcome"].annotation)
