"""/v3/verify and Identity Manager against `phoneid dev` over HTTP, on the Sandbox and production
tiers; on production the fake CAMARA operator is scripted per test through `/_local/operator`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import DevServer, HttpApi, start_dev_server
from tests.unit.helpers import identity_record

pytestmark = pytest.mark.e2e

CUSTOMER = "+12025550142"
NOOR = {"firstName": "Noor", "lastName": "Haddad"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_readme_verify_walkthrough_and_the_enrolled_identity(remote: HttpApi) -> None:
    # Given an integrator of the running Sandbox stack
    integrator = remote.integrator()
    token = integrator.access_token
    http = remote.http

    # When it verifies the README's customer
    verified = http.post(
        "/v3/verify",
        json={
            "phoneNumber": "+12025550112",
            "verificationType": "verifiedUser",
            "firstName": "Lena",
            "lastName": "Ortiz",
            "clientCustomerId": "cust-42",
        },
        headers=bearer(token),
    ).json()

    # Then she passes, is enrolled, and Identity Manager has her: get, lookup, list
    assert verified["success"] == "true"
    assert verified["isEnrolled"] is True
    service_id = verified["serviceId"]
    got = http.get(f"/v3/identity/{service_id}", headers=bearer(token))
    assert got.status_code == 200
    assert got.json()["clientCustomerId"] == "cust-42"
    assert [
        i["serviceId"]
        for i in http.get("/v3/identity/+12025550112/lookup", headers=bearer(token)).json()["items"]
    ] == [service_id]
    assert service_id in [
        r["serviceId"] for r in http.get("/v3/identity", headers=bearer(token)).json()["results"]
    ]

    # And once disenrolled she is gone (8011)
    assert http.delete(f"/v3/identity/{service_id}", headers=bearer(token)).json() == {"success": True}
    gone = http.get(f"/v3/identity/{service_id}", headers=bearer(token))
    assert (gone.status_code, gone.json()["code"]) == (404, 8011)


def test_readme_sim_swap_user_fails_with_9135(remote: HttpApi) -> None:
    integrator = remote.integrator()

    answer = remote.http.post(
        "/v3/verify",
        json={"phoneNumber": "+14045550135", "verificationType": "humanAssurance"},
        headers=bearer(integrator.access_token),
    ).json()

    assert answer["success"] == "false"
    assert answer["evaluation"]["authentication"]["failureReasons"] == {
        "9135": "Possible takeover: SIM swap under 24 hours"
    }


@pytest.fixture(scope="module")
def production_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    server = start_dev_server(tmp_path_factory.mktemp("production"), PHONEID_TIER="production")
    people = tmp_path_factory.mktemp("people") / "people.jsonl"
    people.write_text(json.dumps(identity_record(CUSTOMER)) + "\n")
    imported = server.cli("identities", "import", str(people), "--local")
    assert imported.returncode == 0, imported.stderr
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture
def production(production_server: DevServer) -> Iterator[HttpApi]:
    with httpx.Client(base_url=production_server.base_url, timeout=30) as client:
        yield HttpApi(client)
        client.delete("/_local/operator")


def verify(api: HttpApi, **fields: Any) -> dict[str, Any]:
    integrator = api.integrator()
    answer = api.http.post(
        "/v3/verify",
        json={"phoneNumber": CUSTOMER, "verificationType": "verifiedUser", **NOOR, **fields},
        headers=bearer(integrator.access_token),
    )
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_production_verify_with_a_quiet_operator_passes(production: HttpApi) -> None:
    body = verify(production)

    assert body["success"] == "true"
    assert body["identity"]["firstName"] == "Noor"
    assert all(result == {"result": "pass"} for result in body["evaluation"].values())


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ({"callForwarding": True}, "9137"),
        ({"subscriber": {"givenName": "Sam", "familyName": "Park"}}, "9168"),
    ],
)
def test_production_verify_reads_the_scripted_operator(
    production: HttpApi, script: dict[str, Any], code: str
) -> None:
    # Given the operator scripted for the customer's number
    scripted = production.http.post("/_local/operator", json={"phoneNumber": CUSTOMER, **script})
    assert scripted.status_code == 204, scripted.text

    # When verified
    body = verify(production)

    # Then its code fails authentication
    assert code in body["evaluation"]["authentication"]["failureReasons"]
    assert body["success"] == "false"


def test_production_verify_survives_a_failing_operator(production: HttpApi) -> None:
    production.http.post("/_local/operator", json={"phoneNumber": CUSTOMER, "fail": {"sim-swap": 503}})

    body = verify(production)

    assert body["success"] == "true"


def test_sandbox_stack_has_no_operator_to_script(remote: HttpApi, tmp_path: Path) -> None:
    answer = remote.http.post("/_local/operator", json={"phoneNumber": CUSTOMER, "callForwarding": True})

    assert answer.status_code == 400
