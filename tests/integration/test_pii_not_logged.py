"""SSN, date of birth, secrets and tokens never reach a log line, whatever happens to a request."""

from __future__ import annotations

import pytest

# Their loggers must exist before the ``logged`` fixture turns every service logger to DEBUG.
import phoneid.services.identity_manager
import phoneid.services.staged
import phoneid.services.webhooks  # noqa: F401
from tests.harness import Api, LogRecorder

SSN = "911456711"
DOB = "1999-08-08"


def test_a_whole_flow_with_pii_and_failures_logs_none_of_it(
    api: Api, logged: LogRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an integrator, and the service logging at DEBUG
    integrator = api.integrator()

    # When it sends SSN and date of birth at every step, an invalid request carrying them, and a
    # request that fails unexpectedly with PII in the exception's text
    started = integrator.start(phoneNumber="+12025550111", ssn=SSN, dob=DOB)
    correlation_id = started.json()["correlationId"]
    integrator.post("/v3/validate", {"correlationId": correlation_id})
    integrator.post(
        "/v3/complete",
        {"correlationId": correlation_id, "individual": {"firstName": "Kira", "ssn": SSN, "dob": DOB}},
    )
    integrator.start(phoneNumber="+12025550111", ssn=SSN, dob="1999-13-45", extra=SSN)
    monkeypatch.setattr(type(api.container.staged), "validate", _explode_with_pii)
    failed = integrator.post("/v3/validate", {"correlationId": correlation_id})

    # Then the logs hold none of the PII, the client secret or the tokens
    assert failed.status == 500
    written = "\n".join(logged.lines)
    assert "flow started" in written  # logging did happen
    assert "unexpected error" in written
    for secret in (
        SSN,
        DOB,
        "1999-13-45",
        integrator.credentials.client_secret,
        integrator.access_token,
        started.json()["authToken"],
    ):
        assert secret not in written


def _explode_with_pii(*_args: object, **_kwargs: object) -> None:
    raise ValueError(f"identity {SSN} born {DOB}")


def test_identity_manager_and_webhook_secrets_log_no_pii(api: Api, logged: LogRecorder) -> None:
    # Given an integrator whose operator registered a webhook
    integrator = api.integrator()
    registered = api.container.client_admin.set_webhook(
        integrator.client_id, "https://hooks.example.com/p?t=s3cr3t"
    )

    # When it enrolls, lists, looks up and disenrolls an identity with names and attributes
    enrolled = integrator.post(
        "/v3/identity",
        {
            "phoneNumber": "+12025550143",
            "firstName": "Quentin",
            "lastName": "Marlowe-Vance",
            "identityAttributes": [{"attributeType": "walletId", "attributeValue": "wallet-7781"}],
        },
    )
    service_id = enrolled.json()["serviceId"]
    headers = {"authorization": f"Bearer {integrator.access_token}"}
    api.request("GET", "/v3/identity/+12025550143/lookup", None, headers)
    api.request("DELETE", f"/v3/identity/{service_id}", None, headers)

    # Then neither the names, the attribute, the full number, nor the webhook secret or query reach the logs
    written = "\n".join(logged.lines)
    assert "enrolled" in written
    for secret in ("Quentin", "Marlowe", "wallet-7781", "2025550143", registered.secret, "s3cr3t"):
        assert secret not in written
