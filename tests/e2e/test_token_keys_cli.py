"""`phoneid token-keys` against a running `phoneid dev`: the published keys, and an emergency
replacement after which the old key's tokens are refused and new tokens carry the new key."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import httpx
import jwt
import pytest

from tests.e2e.conftest import CLIENT_ID, CLIENT_SECRET, start_dev_server

pytestmark = pytest.mark.e2e


def test_the_operator_lists_the_keys_and_replaces_them_and_old_tokens_stop_verifying(tmp_path: Path) -> None:
    # Given a stack of its own (the replacement would refuse other tests' tokens) and a client's token
    server = start_dev_server(
        tmp_path, PHONEID_SFTP_PORT="0", PHONEID_CLIENT_ID=CLIENT_ID, PHONEID_CLIENT_SECRET=CLIENT_SECRET
    )
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            form = {
                "grant_type": "client_credentials",
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
            }
            old_token = http.post("/token", data=form).json()["access_token"]
            listed = server.cli("token-keys", "list", "--local", "--json")
            published = [key["kid"] for key in http.get("/.well-known/jwks.json").json()["keys"]]

            # Then today's and tomorrow's keys are listed as the JWKS publishes them, today's signing
            assert listed.returncode == 0, listed.stderr
            assert [key["kid"] for key in json.loads(listed.stdout)] == published
            assert jwt.get_unverified_header(old_token)["kid"] == published[0]

            # When the operator replaces them, and five minutes pass on the stack's clock
            replaced = server.cli("token-keys", "replace", "--local", "--json")
            assert replaced.returncode == 0, replaced.stderr
            new_keys = json.loads(replaced.stdout)
            new_kids = [key["kid"] for key in new_keys]
            moved = http.post("/_local/clock", json={"advanceSeconds": 301})
            now = datetime.fromisoformat(moved.json()["now"])
            # The key of the window the stack's clock is now in: tomorrow's when the five minutes
            # cross midnight UTC.
            [current] = [
                key["kid"]
                for key in new_keys
                if datetime.fromisoformat(key["not_before"]) <= now < datetime.fromisoformat(key["not_after"])
            ]

            # Then the old token is refused, and a new one is signed by the new key of the stack's day
            refused = http.post(
                "/v3/start",
                json={"flowType": "mobile", "phoneNumber": "+12025550199"},
                headers={"authorization": f"Bearer {old_token}"},
            )
            assert refused.status_code == 401
            new_token = http.post("/token", data=form).json()["access_token"]
            assert jwt.get_unverified_header(new_token)["kid"] == current
            assert set(new_kids).isdisjoint(published)
    finally:
        server.stop()
