"""Idempotency-Key over real HTTP against `phoneid dev`: the header as an HTTP client sends it, the
draft's quoted form included (docs/api.md#retries-with-an-idempotency-key)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import HttpApi

pytestmark = pytest.mark.e2e

KEY = '"5d7a1c2e-3f4b-4e8a-9c1d-2b3a4c5d6e7f"'


def test_a_retried_enrollment_over_http_is_answered_once(remote: HttpApi) -> None:
    # Given an integrator of the running stack
    integrator = remote.integrator()
    headers = {"Authorization": f"Bearer {integrator.access_token}", "Idempotency-Key": KEY}
    body = {"phoneNumber": "+12025559071", "clientCustomerId": "retried-1"}

    # When it sends an enrollment, then the same again (its first answer lost), then another body
    first = remote.http.post("/v3/identity", json=body, headers=headers)
    again = remote.http.post("/v3/identity", json=body, headers=headers)
    other = remote.http.post("/v3/identity", json={**body, "clientCustomerId": "retried-2"}, headers=headers)

    # Then the retry is the first answer byte for byte, the other body 422/8021
    assert first.status_code == 200, first.text
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert (other.status_code, other.json()["code"]) == (422, 8021)
    # and the client has one identity
    listed = remote.http.get("/v3/identity", headers={"Authorization": headers["Authorization"]}).json()
    assert [item["serviceId"] for item in listed["results"]] == [first.json()["serviceId"]]
