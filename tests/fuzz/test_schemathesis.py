"""Schemathesis against a running ``phoneid dev``: every operation of docs/openapi.json, every check.

The gate runs a bounded pass (``PHONEID_FUZZ_EXAMPLES``, 8 by default; ``make fuzz`` sets more) with a
fixed seed: the same requests each run. A failure prints schemathesis' report: the check, the
request as a curl line and the answer. Decide whether the server or the document is wrong and fix
that one (docs/adr/0055-the-gate-fuzzes-the-api.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from phoneid_dev.openapi import openapi_path
from tests.e2e.conftest import DevServer, HttpApi, start_dev_server
from tests.harness import Credentials, Integrator
from tests.integration.test_unify import first_visit
from tests.sandbox_numbers import OTP_PASS

pytestmark = pytest.mark.fuzz

BIN = Path(sys.executable).parent
SEED = 20260501
EXAMPLES = int(os.environ.get("PHONEID_FUZZ_EXAMPLES", "8"))
# The Sandbox token-only user (docs/sandbox.md): its flow needs no client SDK.
FLOW_NUMBER = "+12025550111"
ENROLLED_NUMBER = "+12025550143"

# A request the document calls valid may still be refused with 400 where validity rests on what no
# schema states: the flow's state (8003), the Sandbox's test users (8007), a number that is not
# valid for its country code, a startKey this client was never given, a decisions' time range that
# runs backwards, past 366 days or outside 1970 to 9998, a decision id holding a character no path
# parameter may have (8001; an id of any other shape is 8011). There the
# positive_data_acceptance check takes 400 too; everywhere else a 400 for valid data fails.
_STATEFUL_400 = [
    "/v3/start",
    "/v3/validate",
    "/v3/challenge",
    "/v3/complete",
    "/v3/unify",
    "/v3/unify-status",
    "/v3/unify-bind",
    "/v3/verify",
    "/v3/identity",
    "/v3/identity/{id}/lookup",
    "/v3/decisions",
    "/v3/decisions/summary",
    "/v3/decisions/{id}",
]
# The write routes that honour Idempotency-Key: the fuzzer draws keys from the header's pattern and
# sends one key with several bodies, so a valid request may be 422, the key used for another request
# (docs/api.md#retries-with-an-idempotency-key): state no schema states, as 409 is.
_KEYED = [
    "/v3/start",
    "/v3/verify",
    "/v3/verify/batch",
    "/v3/identity",
    "/v3/identity/batch",
    "/v3/device/revoke",
]
_IDENTITY_IDS = ["/v3/identity/{id}", "/v3/identity/{id}/activate", "/v3/identity/{id}/deactivate"]
_ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429"]


@dataclass(frozen=True)
class Fixtures:
    """What the fuzzer sends where a random value would only be refused."""

    client_id: str
    client_secret: str
    access_token: str
    auth_token: str
    correlation_id: str
    service_id: str
    device_id: str


def _fixtures(base_url: str) -> Fixtures:
    with httpx.Client(base_url=base_url, timeout=30) as http:
        created = http.post("/_local/clients", json={})
        assert created.status_code == 201, created.text
        client = created.json()
        form = {"grant_type": "client_credentials", **client}
        token = http.post("/token", data=form)
        assert token.status_code == 200, token.text
        bearer = {"Authorization": f"Bearer {token.json()['access_token']}"}
        flow = {"flowType": "mobile", "phoneNumber": FLOW_NUMBER}
        started = http.post("/v3/start", headers=bearer, json=flow)
        assert started.status_code == 200, started.text
        enrolled = http.post("/v3/identity", headers=bearer, json={"phoneNumber": ENROLLED_NUMBER})
        assert enrolled.status_code == 200, enrolled.text
        # A device key bound to the client, as a unified flow with OTP binds it: the key the fuzzer
        # names to revoke or to prove a new unify with.
        integrator = Integrator(HttpApi(http), Credentials(client["client_id"], client["client_secret"]))
        _, bound = first_visit(integrator, OTP_PASS)
    return Fixtures(
        client_id=client["client_id"],
        client_secret=client["client_secret"],
        access_token=token.json()["access_token"],
        auth_token=started.json()["authToken"],
        correlation_id=started.json()["correlationId"],
        service_id=enrolled.json()["serviceId"],
        device_id=bound["deviceId"],
    )


def _toml(value: object) -> str:
    """A TOML value: JSON's strings, numbers, booleans and arrays are TOML's too."""
    return json.dumps(value)


def _config(found: Fixtures) -> str:
    """schemathesis.toml: both security schemes, the real values half the time, the statuses above."""
    lines = [
        f"seed = {SEED}",
        "[cache]",
        "enabled = false",
        "[generation]",
        f"max-examples = {EXAMPLES}",
        'database = "none"',
        "[auth.openapi.accessToken]",
        f"bearer = {_toml(found.access_token)}",
        "[auth.openapi.authToken]",
        f"bearer = {_toml(found.auth_token)}",
    ]
    values = {
        "clientId": found.client_id,
        "clientSecret": found.client_secret,
        "correlationId": found.correlation_id,
        "serviceId": found.service_id,
        "deviceId": found.device_id,
    }
    for name, value in values.items():
        lines += [f"[dictionaries.{name}]", f"values = [{_toml(value)}]"]
    bound = {"body.client_id": "clientId", "body.client_secret": "clientSecret"}
    bound["body.correlationId"] = "correlationId"
    bound["body.deviceId"] = "deviceId"
    lines.append("[parameters]")
    lines += [f'"{key}" = {{ dictionary = "{name}", probability = 0.5 }}' for key, name in bound.items()]
    accepted = {
        "400": [path for path in _STATEFUL_400 if path not in _KEYED],
        "400 422": [path for path in _STATEFUL_400 if path in _KEYED],
        "422": [path for path in _KEYED if path not in _STATEFUL_400],
    }
    for also, paths in accepted.items():
        lines += [
            "[[operations]]",
            f"include-path = {_toml(paths)}",
            "[operations.checks.positive_data_acceptance]",
            f"expected-statuses = {_toml([*_ACCEPTED, *also.split()])}",
        ]
    lines += [
        # An Instant Link the fuzzer makes up is unknown: 410, the page of a used or expired link.
        "[[operations]]",
        'include-path = "/l/{token}"',
        "[operations.checks.positive_data_acceptance]",
        f"expected-statuses = {_toml([*_ACCEPTED, '410'])}",
        "[[operations]]",
        f"include-path = {_toml(_IDENTITY_IDS)}",
        "[operations.parameters]",
        '"path.id" = { dictionary = "serviceId", probability = 0.5 }',
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[DevServer]:
    server = start_dev_server(tmp_path, PHONEID_SFTP_PORT="0")
    yield server
    server.stop()
    sys.stdout.write("".join(server.output().splitlines(keepends=True)[-200:]))  # for a failure's report


def test_schemathesis_finds_no_failure_in_any_operation(stack: DevServer, tmp_path: Path) -> None:
    config = tmp_path / "schemathesis.toml"
    config.write_text(_config(_fixtures(stack.base_url)))
    command = [
        str(BIN / "st"),
        "--config-file",
        str(config),
        "--no-color",
        "run",
        str(openapi_path()),
        "--url",
        stack.base_url,
        "--checks",
        "all",
        # API Gateway answers a method no route has with 403 (8001), not 405
        # (docs/adr/0055-the-gate-fuzzes-the-api.md).
        "--exclude-checks",
        "unsupported_method",
        "--workers",
        # The same requests each run (the seed); two workers may interleave operations differently,
        # which changes only answers that rest on state (a flow's step, a deleted identity), each
        # declared by the document.
        "2",
        # A loaded machine (the gate runs on 2 CPUs) may answer slowly: a late answer is not a finding.
        "--request-timeout",
        "60",
        "--report",
        "junit",
        "--report-dir",
        str(tmp_path / "report"),
    ]
    run = subprocess.run(  # noqa: S603 - schemathesis from this environment
        command, cwd=tmp_path, capture_output=True, text=True, timeout=3600, check=False
    )
    report = run.stdout + run.stderr
    sys.stdout.write(report[-4000:])  # the summary: operations, cases, failures (pytest -s shows it)
    assert run.returncode == 0, report[-30000:]
