"""Whether a function traces is decided by Powertools' documented rule, read by ``phoneid.config``,
never by a private method of Powertools' Tracer (which a release may rename or remove)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aws_lambda_powertools import Tracer

from phoneid import config, tasks

LAMBDA = {"LAMBDA_TASK_ROOT": "/var/task", "AWS_LAMBDA_FUNCTION_NAME": "traced"}


@pytest.fixture
def fresh_decision() -> Iterator[None]:
    config.tracing.cache_clear()
    tasks._tracer.cache_clear()
    yield
    config.tracing.cache_clear()
    tasks._tracer.cache_clear()


@pytest.mark.parametrize(
    ("env", "enabled"),
    [
        (LAMBDA, True),
        ({**LAMBDA, "POWERTOOLS_TRACE_DISABLED": "false"}, True),
        ({**LAMBDA, "POWERTOOLS_TRACE_DISABLED": "true"}, False),
        ({**LAMBDA, "POWERTOOLS_TRACE_DISABLED": "1"}, False),
        ({**LAMBDA, "AWS_SAM_LOCAL": "true"}, False),
        ({**LAMBDA, "AWS_CHALICE_CLI_MODE": "true"}, False),
        ({}, False),  # not in Lambda: no X-Ray daemon listens
    ],
)
def test_tracing_is_on_in_lambda_unless_disabled_or_emulated(env: dict[str, str], enabled: bool) -> None:
    assert config.Tracing.from_env(env).enabled is enabled


def test_a_traced_handler_with_tracing_off_answers_without_powertools_private_api(
    monkeypatch: pytest.MonkeyPatch, fresh_decision: None
) -> None:
    # Given a Powertools release without the Tracer's private _is_tracer_disabled, and tracing off
    monkeypatch.delattr(Tracer, "_is_tracer_disabled")
    for name, value in {**LAMBDA, "POWERTOOLS_TRACE_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    handler = tasks.traced(lambda event, context: {"answered": True})

    # When it is invoked
    answer = handler({}, None)  # type: ignore[arg-type]

    # Then it answered, untraced
    assert answer == {"answered": True}
    assert tasks._tracer() is None
