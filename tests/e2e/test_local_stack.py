"""A new user's first hour: `make dev`, then the README's curl walkthrough, over real HTTP."""

from __future__ import annotations

import json
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests import http_collection
from tests.e2e.conftest import CLIENT_ID, CLIENT_SECRET, DevServer, HttpApi, start_dev_server
from tests.harness import Credentials

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e


def _token(http: httpx.Client, client_id: str, client_secret: str) -> str:
    return HttpApi(http).token(Credentials(client_id, client_secret))


def test_readme_walkthrough_for_the_token_only_user(http: httpx.Client) -> None:
    # Given the credentials the stack was seeded with (PHONEID_CLIENT_ID / PHONEID_CLIENT_SECRET)
    headers = {"Authorization": f"Bearer {_token(http, CLIENT_ID, CLIENT_SECRET)}"}

    # When the integrator runs the staged flow for the token-only Sandbox user
    started = http.post(
        "/v3/start", headers=headers, json={"flowType": "mobile", "phoneNumber": "+12025550111"}
    )
    correlation_id = started.json()["correlationId"]
    validated = http.post("/v3/validate", headers=headers, json={"correlationId": correlation_id})
    challenged = http.post(
        "/v3/challenge", headers=headers, json={"correlationId": correlation_id, "dob": "1999-08-08"}
    )
    completed = http.post(
        "/v3/complete",
        headers=headers,
        json={
            "correlationId": correlation_id,
            "individual": {"firstName": "Kira", "lastName": "Petrova", "ssn": "911456711"},
        },
    )
    replayed = http.post(
        "/v3/complete", headers=headers, json={"correlationId": correlation_id, "individual": {}}
    )

    # Then each answer names the next call, and the flow ends passing
    assert started.status_code == 200
    assert started.json()["next"] == {"v3-validate": "/v3/validate"}
    assert validated.json()["next"] == {"v3-challenge": "/v3/challenge"}
    assert challenged.json()["success"] is True
    assert challenged.json()["individual"]["dob"] == "1999-08-08"
    assert completed.json() == {
        "success": True,
        "next": {"done": "done"},
        "evaluation": {
            "identification": {"result": "pass"},
            "authentication": {"result": "pass"},
            "compliance": {"result": "pass"},
            "risk": {"result": "pass"},
        },
    }
    assert replayed.status_code == 403
    assert replayed.json()["code"] == 8003


def test_gateway_answers_like_api_gateway(http: httpx.Client) -> None:
    no_token = http.post("/v3/start", json={"flowType": "mobile"})
    unknown_path = http.post("/v3/unknown", json={})

    assert no_token.status_code == 401
    assert no_token.json() == {
        "code": 8002,
        "message": "Unauthorized request: credentials missing or invalid",
    }
    assert unknown_path.status_code == 403
    assert unknown_path.json()["code"] == 8001


def test_local_clients_route_creates_working_credentials(http: httpx.Client) -> None:
    created = http.post("/_local/clients", json={"solution": "verified-user", "countries": ["US"]})

    assert created.status_code == 201
    token = _token(http, created.json()["client_id"], created.json()["client_secret"])
    # A verified-user client may not use the identity solution's test users: 8009
    refused = http.post(
        "/v3/start",
        headers={"Authorization": f"Bearer {token}"},
        json={"flowType": "mobile", "phoneNumber": "+12025550111"},
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == 8009


def test_cli_reaches_the_running_stack(dev_server: DevServer, http: httpx.Client) -> None:
    # When an operator creates a client from another process
    created = dev_server.cli("clients", "create", "--local", "--json", "--name", "from-cli")
    listed = dev_server.cli("clients", "list", "--local", "--json")

    # Then the client works against the stack and is listed, without its secret
    assert created.returncode == 0, created.stderr
    credentials = json.loads(created.stdout)
    assert _token(http, credentials["client_id"], credentials["client_secret"])
    listing = json.loads(listed.stdout)
    assert credentials["client_id"] in {c["client_id"] for c in listing}
    assert credentials["client_secret"] not in listed.stdout


def test_stack_prints_credentials_and_stops_cleanly_on_ctrl_c_and_starts_again_from_its_data(
    tmp_path: Path,
) -> None:
    # Given a stack started without seeded credentials, keeping its state in a data directory
    data = tmp_path / "data"
    server = start_dev_server(tmp_path, "--data", str(data))
    assert server.state_file.exists()

    # When the user pastes the banner's export line into a shell, then presses Ctrl-C
    exports = [line for line in server.output().splitlines() if line.startswith("export ")]
    assert len(exports) == 1, server.output()
    shell = subprocess.run(  # noqa: S603 - the banner's own line
        ["/bin/sh", "-c", f'{exports[0]}\nprintf "%s\\n" "$B" "$ID" "$SECRET"'],
        capture_output=True,
        text=True,
        check=True,
    )
    base_url, client_id, client_secret = shell.stdout.splitlines()
    with httpx.Client(base_url=base_url, timeout=30) as http:
        token = _token(http, client_id, client_secret)
        # And makes a client, enrolls an identity, onboards a Connect client and registers a webhook
        enrolled = http.post(
            "/v3/identity", headers={"Authorization": f"Bearer {token}"}, json={"phoneNumber": "+12025550140"}
        )
    assert enrolled.status_code == 200, enrolled.text
    service_id = enrolled.json()["serviceId"]
    connect_client, connect_name, _ = server.onboard_connect_client(
        "kept", {"name": "kept"}, "--type", "verifiedUser"
    )
    webhook = "http://127.0.0.1:9/phoneid-events"
    registered = server.cli("clients", "update", connect_client, "--webhook", webhook, "--local")
    assert registered.returncode == 0, registered.stderr
    code, output = server.stop()

    # Then the line had set the README's variables: the stack's URL and a working client's credentials
    assert base_url == server.base_url
    assert token
    assert f"client_id      {client_id}" in output
    assert f"client_secret  {client_secret}" in output
    # And it exits 0 and removes its state file, keeping its data readable by the user alone
    assert code == 0
    assert "stopped" in output
    assert not server.state_file.exists()
    assert f"State kept in {data}" in output
    assert stat.S_IMODE((data / "stack.json").stat().st_mode) == 0o600

    # When it starts again with the same data directory
    (tmp_path / "again").mkdir()
    again = start_dev_server(tmp_path / "again", "--data", str(data))
    try:
        with httpx.Client(base_url=again.base_url, timeout=30) as http:
            headers = {"Authorization": f"Bearer {_token(http, client_id, client_secret)}"}
            identity = http.get(f"/v3/identity/{service_id}", headers=headers)
        with ThreadPoolExecutor(2) as both:  # two CLI processes, each mostly its imports
            listing = both.submit(again.cli, "clients", "list", "--local", "--json")
            shown = both.submit(again.cli, "connect", "show", connect_client, "--local", "--json").result()
            listed = listing.result()
    finally:
        again.stop()

    # Then the banner's client is the same, its credentials still good; the identity, the Connect
    # client and its webhook are all there
    assert f"client_id      {client_id}\n  client_secret  {client_secret}" in again.output()
    assert identity.status_code == 200, identity.text
    assert identity.json()["phoneNumber"] == "+12025550140"
    clients = {each["client_id"]: each for each in json.loads(listed.stdout)}
    assert {client_id, connect_client} <= clients.keys()
    assert sorted(each["name"] for each in clients.values()) == ["demo", "dev", "kept"]  # none made again
    assert clients[connect_client]["webhook"] == webhook, clients
    assert json.loads(shown.stdout)["client_name"] == connect_name, shown.stdout


def test_the_http_collection_runs_against_the_stack(dev_server: DevServer, http: httpx.Client) -> None:
    # Given the README's examples as an HTTP collection, with the stack's URL and credentials pasted
    collection = http_collection.load(
        ROOT / "docs" / "http" / "phoneid.http",
        {"B": dev_server.base_url, "ID": CLIENT_ID, "SECRET": CLIENT_SECRET},
    )

    # When each request is sent in order, filled in from the answers before it
    sent = http_collection.Run(collection, http_collection.sender(http)).all()

    # Then each answers 2xx, or the error status it is marked with
    outcomes = [
        (index, request.method, request.url, _outcome(request.expect, response))
        for index, (request, response) in enumerate(sent)
    ]
    assert outcomes == [
        (index, request.method, request.url, request.expect or "2xx")
        for index, (request, _) in enumerate(sent)
    ], [response.text for _, response in sent]
    answers = [response.json() for _, response in sent]
    # And they are the README's: the flow passes, its replay is 8003, Quin fails on 9135 at complete
    assert answers[4]["success"] is True
    assert answers[5]["code"] == 8003
    assert answers[9]["evaluation"]["authentication"]["failureReasons"].keys() == {"9135"}
    assert [answer["success"] for answer in answers[10:12]] == ["pending", True]
    assert answers[12]["isEnrolled"] is True
    assert answers[13]["clientCustomerId"] == "cust-42"
    assert answers[14]["success"] == "false"
    # And the decision records: Lena's verification listed and read, the batch item's by its id
    # (`#` sent as %23), the summary counting them, and Quin's records (his flow, his verify) erased
    lena = answers[15]["results"][0]
    assert (lena["kind"], lena["number"]) == ("verify", {"country": "US", "lastTwo": "12"})
    assert (answers[16]["id"], answers[16]["tier"]) == (lena["id"], "sandbox")
    assert answers[18]["id"] == f"{answers[17]['correlationId']}#0"
    assert answers[19]["byKind"]["verify"] >= 2
    assert answers[19]["byKind"]["verify-batch"] >= 1
    assert answers[20]["erased"] >= 2


def _outcome(expect: int | None, response: httpx.Response) -> int | str:
    return "2xx" if expect is None and response.is_success else response.status_code
