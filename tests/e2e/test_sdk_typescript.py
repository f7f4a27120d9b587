"""The TypeScript server SDK (clients/typescript) and Prove's published SDK, against `phoneid dev`:
a method of the built SDK for every server operation, the SDK's unit tests, its examples compiled
with tsc (strict) and run with node as an integrator runs them, and @prove-identity/prove-api,
unmodified, pointed at the stack (docs/adr/0107-the-typescript-server-sdk.md).

Prove's SDK is licensed CC BY-NC-ND 4.0, not open source: its test is marked ``prove_compat``, left
out of `make test`, and `make prove-compat` installs the SDK (tests/prove-compat) and runs it
(docs/adr/0112-proves-sdk-leaves-the-default-gate.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from phoneid_dev.openapi import openapi_path
from tests.e2e.conftest import DevServer
from tests.typescript_sdk import ROOT, build, run

pytestmark = pytest.mark.e2e

PROVE_COMPAT = ROOT / "tests" / "prove-compat"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("sdk-typescript"), "examples", "test")


@pytest.fixture(scope="module")
def client_env(dev_server: DevServer) -> dict[str, str]:
    """A fresh client of the stack (the default solution, `identity`), as the examples read it."""
    return _new_client(dev_server)


@pytest.fixture
def own_client_env(dev_server: DevServer) -> dict[str, str]:
    """A client of the stack for one test alone: no other example's decisions among its records."""
    return _new_client(dev_server)


def _new_client(dev_server: DevServer) -> dict[str, str]:
    created = httpx.post(f"{dev_server.base_url}/_local/clients", json={}, timeout=30)
    assert created.status_code == 201, created.text
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("PHONEID_")},
        "PHONEID_BASE_URL": dev_server.base_url,
        "PHONEID_CLIENT_ID": created.json()["client_id"],
        "PHONEID_CLIENT_SECRET": created.json()["client_secret"],
    }


def test_every_server_operation_of_the_document_has_a_method(package: Path) -> None:
    # Given the server operations of the document: /token and /v3, which an integrator's backend calls
    document = json.loads(openapi_path().read_text())
    operations = {
        (method.upper(), path)
        for path, item in document["paths"].items()
        if path == "/token" or path.startswith("/v3/")
        for method in item
    }

    # When the built SDK is asked for its routes and its client's methods
    script = (
        "const sdk = await import(process.argv[1]);"
        "console.log(JSON.stringify({routes: sdk.ROUTES, token: sdk.TOKEN_ROUTE,"
        " methods: Object.getOwnPropertyNames(sdk.PhoneIdClient.prototype)}));"
    )
    listed = run(["node", "--input-type=module", "-e", script, str(package / "dist" / "index.js")], ROOT)
    assert listed.returncode == 0, listed.stderr
    sdk = json.loads(listed.stdout)

    # Then each operation is the route of a method of PhoneIdClient (the token its own), and no more
    routes = {name: (route["method"], route["path"]) for name, route in sdk["routes"].items()}
    assert set(routes.values()) | {(sdk["token"]["method"], sdk["token"]["path"])} == operations
    assert len(set(routes.values())) == len(routes)
    assert set(routes) <= set(sdk["methods"])


def test_the_sdk_unit_tests_pass(package: Path) -> None:
    # The token's renewal, the typed errors, the Idempotency-Key and the webhook check, on a fake fetch
    tested = run(["node", "--test", "test/dist/"], package)

    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "# fail 0" in tested.stdout


def _example(package: Path, env: dict[str, str], name: str) -> list[str]:
    ran = run(["node", f"examples/dist/{name}.js"], package, **env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout.splitlines()


def test_the_staged_flow_example(package: Path, client_env: dict[str, str]) -> None:
    lines = _example(package, client_env, "staged-flow")

    assert [line.split(":")[0] for line in lines] == [
        "start",
        "validate",
        "challenge",
        "complete",
        "validate again",
    ]
    assert lines[1] == "validate: success true, challengeMissing true"
    assert lines[2] == "challenge: success true, Kira Petrova"
    assert lines[3] == "complete: success true, next done"
    assert lines[4].startswith("validate again: PermissionDeniedError 403/8003: ")


def test_the_verify_example(package: Path, client_env: dict[str, str]) -> None:
    lines = _example(package, client_env, "verify")

    assert lines == [
        "verify: success true, assurance AL2, label verified, enrolled true",
        "verify/batch: +12025550112 success true",
        "verify/batch: +12025550199 success false, error No Sandbox test user matches the phone number",
    ]


def test_the_identity_manager_example(package: Path, client_env: dict[str, str]) -> None:
    lines = _example(package, client_env, "identity")

    assert [line.split(":")[0] for line in lines] == [
        "enroll", "get", "lookup", "deactivate, activate", "disenroll", "get again",
    ]  # fmt: skip
    assert lines[1].startswith("get: +12025550123 active true, customer example-")
    assert lines[2].endswith("ours among them: true")
    assert lines[3] == "deactivate, activate: active false then true"
    assert lines[5] == "get again: NotFoundError 404/8011: Identity not found"


def test_the_decisions_example(package: Path, own_client_env: dict[str, str]) -> None:
    lines = _example(package, own_client_env, "decisions")

    assert lines == [
        "verify, verify/batch: 3 decisions",
        "list: 2 records of the number ending 12, newest first: verify-batch pass, verify pass",
        "get: verify-batch error (code 8007), number ..99, tier sandbox",
        "summary: 3 decisions, 2 passed, 0 failed, 1 errors; verify 1, verify-batch 2",
        "erase: 2 records of the number",
        "get Lena's item: NotFoundError 404/8011: Decision not found",
    ]


def test_the_webhook_example(package: Path, client_env: dict[str, str]) -> None:
    lines = _example(package, client_env, "webhook")

    assert lines == [
        "genuine delivery: SIM_SWAP for 72beb529-42d4-49fd-9621-f2a2e08ecbeb "
        "(event 58a4baba-360d-4da1-b2b7-10a14830a3b8)",
        "tampered body: refused (signature does not match)",
        "a day later: refused (stale delivery: the timestamp is outside the tolerance)",
    ]


@pytest.mark.prove_compat
def test_proves_published_sdk_runs_the_staged_flow_unmodified(client_env: dict[str, str]) -> None:
    if not (PROVE_COMPAT / "node_modules" / "@prove-identity" / "prove-api").is_dir():
        # `make prove-compat` installs it first and sets PHONEID_PROVE_COMPAT: there, its absence fails
        missing = (
            "Prove's SDK is not installed in tests/prove-compat: make prove-compat installs it and runs this"
        )
        if os.environ.get("PHONEID_PROVE_COMPAT"):
            pytest.fail(missing)
        pytest.skip(missing)
    # Given @prove-identity/prove-api as npm has it, its server URL the stack's
    ran = run(["node", str(PROVE_COMPAT / "prove_sdk_flow.mjs")], PROVE_COMPAT, **client_env)

    # Then its token and the staged flow pass, its error classes get the API's codes, and the calls
    # where that version and SPEC differ differ exactly as recorded
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [line.split(":")[0] for line in ran.stdout.splitlines()] == [
        "ok token", "ok start", "ok validate", "ok challenge", "ok complete",
        "ok validate again", "ok start, unknown user",
        "differs unify", "differs verify", "differs verify-status",
    ]  # fmt: skip
