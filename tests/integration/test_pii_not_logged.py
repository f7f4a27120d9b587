"""SSN, date of birth, secrets and tokens never reach a log line, whatever happens to a request."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from tests.harness import Api

SSN = "911456711"
DOB = "1999-08-08"


class _Recorder(logging.Handler):
    """Keeps every record whole: message, extra fields and exception text."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(
            json.dumps(record.__dict__, default=str) + (self.format(record) if record.exc_info else "")
        )


@pytest.fixture
def logged() -> Iterator[_Recorder]:
    """Everything the service logs, at any level, while the test runs."""
    loggers = [
        logging.getLogger(name)
        for name in list(logging.Logger.manager.loggerDict)
        if name.startswith("phoneid")
    ]
    previous = [each.level for each in loggers]
    recorder = _Recorder()
    service = logging.getLogger("phoneid")
    service.addHandler(recorder)
    for each in loggers:
        each.setLevel(logging.DEBUG)
    yield recorder
    service.removeHandler(recorder)
    for each, level in zip(loggers, previous, strict=True):
        each.setLevel(level)


def test_a_whole_flow_with_pii_and_failures_logs_none_of_it(
    api: Api, logged: _Recorder, monkeypatch: pytest.MonkeyPatch
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
