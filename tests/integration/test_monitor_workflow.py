"""The change monitor's pass on moto, through its workflow as in AWS: MonitorStateMachine
(statemachines/monitor.asl.json, run by moto's interpreter; its Lambda tasks run by the template's
handlers) plans the segments, checks each in a Distributed Map's child execution, and records the
totals. Each identity's check is counted where its monitor state is saved: every active identity is
checked exactly once per pass, also when a failed pass is started again. Retry waits are instant
here (``retry_waits.retry_delay_scale``)."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

import boto3
import pytest

from phoneid import bootstrap
from phoneid.adapters.dynamodb.enrollments.monitor_states import DynamoMonitorStates
from phoneid.adapters.dynamodb.monitor_passes import DynamoMonitorPasses
from phoneid.domain.enrollment import Action, Enrollment, new_service_id
from phoneid.domain.monitor import MonitorState
from phoneid.domain.monitor_pass import SegmentProgress
from phoneid_cli.main import main
from phoneid_dev import workflows
from phoneid_dev.workflows import retry_waits
from tests.harness import Api

PASS = "2026-03-02T06:00:00Z"
SEGMENTS = 4


@pytest.fixture
def monitored(make_api: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Api, Counter[str]]:
    """A stack whose passes have 4 segments; the checks counted by identity (serviceId)."""
    monkeypatch.setattr(retry_waits, "retry_delay_scale", 0.0)
    api = make_api(parameters={"MonitorMaxSegments": str(SEGMENTS)})
    checks: Counter[str] = Counter()
    saving = DynamoMonitorStates.save_monitor_state

    def counted(self: DynamoMonitorStates, client_id: str, service_id: str, state: MonitorState) -> bool:
        checks[service_id] += 1
        return saving(self, client_id, service_id, state)

    monkeypatch.setattr(DynamoMonitorStates, "save_monitor_state", counted)
    return api, checks


def enroll(api: Api, count: int, client_id: str | None = None) -> list[str]:
    """``count`` active identities of the client (default: a new one); their serviceIds."""
    client_id = client_id or api.create_client().client_id
    store = api.container.enrollment_store
    ids = []
    for index in range(count):
        enrollment = Enrollment(
            client_id=client_id,
            service_id=new_service_id(),
            phone_number=f"+1202555{index:04d}",
            country="US",
            created_at=api.clock.now() - timedelta(days=30),
        )
        store.enroll(enrollment)
        ids.append(enrollment.service_id)
    return ids


def run_pass(api: Api, at_least: int = 1, pass_id: str = PASS) -> dict[str, Any]:
    """A pass started as the schedule starts it; the execution once it ended."""
    machine = api.stack.physical_ids["MonitorStateMachine"]
    boto3.client("stepfunctions").start_execution(
        stateMachineArn=machine, name=str(uuid.uuid4()), input=json.dumps({"passId": pass_id})
    )
    return workflows.wait(machine, timeout=120, at_least=at_least)[0]


def test_a_pass_checks_every_active_identity_exactly_once(monitored: tuple[Api, Counter[str]]) -> None:
    # Given 30 active identities and one inactive
    api, checks = monitored
    client_id = api.create_client().client_id
    ids = enroll(api, 31, client_id)
    inactive = ids.pop()
    api.container.enrollment_store.apply(client_id, inactive, Action.DEACTIVATE, api.clock.now())

    # When the schedule starts a pass
    execution = run_pass(api)

    # Then the workflow succeeded over 4 segments, every active identity checked once, totals kept
    assert execution["status"] == "SUCCEEDED"
    output = json.loads(execution["output"])
    assert (output["passId"], output["totalSegments"], output["segmentsDone"]) == (PASS, SEGMENTS, SEGMENTS)
    assert output["checked"] == 30
    assert output["finishedAt"] is not None
    assert checks == Counter(dict.fromkeys(ids, 1))


def test_the_next_pass_after_a_finished_one_checks_every_identity_once_more(
    monitored: tuple[Api, Counter[str]],
) -> None:
    # Given a pass that finished over 6 active identities
    api, checks = monitored
    ids = enroll(api, 6)
    assert run_pass(api)["status"] == "SUCCEEDED"

    # When the schedule starts the next pass within the day (the last one is finished: no wait)
    execution = run_pass(api, at_least=2, pass_id="2026-03-02T12:00:00Z")

    # Then it is a pass of its own, and every identity is checked once more
    assert execution["status"] == "SUCCEEDED"
    output = json.loads(execution["output"])
    assert output["passId"] == "2026-03-02T12:00:00Z"
    assert (output["checked"], output["segmentsDone"]) == (6, SEGMENTS)
    assert checks == Counter(dict.fromkeys(ids, 2))


def test_the_cli_shows_the_last_pass(
    monitored: tuple[Api, Counter[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    # Given no pass yet
    api, _ = monitored
    enroll(api, 12)
    assert main(["webhooks", "monitor-status"]) == 0
    assert capsys.readouterr().out.strip() == "no monitor pass yet"
    bootstrap.override(clock=api.clock)  # the command started a container of its own

    # When a pass has run, and the operator asks for the monitor's status
    run_pass(api)
    assert main(["webhooks", "monitor-status", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert main(["webhooks", "monitor-status"]) == 0
    text = capsys.readouterr().out

    # Then it shows the pass finished: its segments, identities checked and times
    assert shown == {
        "passId": PASS,
        "state": "finished",
        "segmentsDone": SEGMENTS,
        "totalSegments": SEGMENTS,
        "segmentsStarted": SEGMENTS,
        "checked": 12,
        "events": 0,
        "startedAt": api.clock.now().isoformat(timespec="seconds"),
        "finishedAt": api.clock.now().isoformat(timespec="seconds"),
    }
    assert text.splitlines()[:2] == [
        f"pass {PASS}: finished, {SEGMENTS}/{SEGMENTS} segments done ({SEGMENTS} started)",
        "  12 identities checked, 0 change events",
    ]


def test_a_pass_failed_in_one_segment_holds_back_the_next_and_is_finished_by_starting_it_again(
    monitored: tuple[Api, Counter[str]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given 30 identities, and a segment whose progress cannot be kept (every retry fails)
    api, checks = monitored
    ids = enroll(api, 30)
    saving = DynamoMonitorPasses.save_progress
    broken = {1}

    def failing(self: DynamoMonitorPasses, pass_id: str, progress: SegmentProgress, now: Any) -> None:
        if progress.segment in broken:
            raise RuntimeError("progress write failed")
        saving(self, pass_id, progress, now)

    monkeypatch.setattr(DynamoMonitorPasses, "save_progress", failing)

    # When the pass runs, fails, and is started again once the fault is gone
    failed = run_pass(api)
    assert main(["webhooks", "monitor-status", "--json"]) == 0
    unfinished = json.loads(capsys.readouterr().out)
    bootstrap.override(clock=api.clock)  # the command started a container of its own
    checked_then = Counter(checks)
    held_back = run_pass(api, at_least=2, pass_id="2026-03-02T12:00:00Z")
    broken.clear()
    finished = run_pass(api, at_least=3)

    # Then the first execution failed unfinished, the second finished the pass, and no identity was
    # checked twice: those of the failed segment's first page were counted, not checked again
    assert failed["status"] == "FAILED"
    assert failed.get("error") == "MonitorPassUnfinished"
    assert (unfinished["state"], unfinished["segmentsDone"], unfinished["finishedAt"]) == (
        "unfinished",
        SEGMENTS - 1,
        None,
    )
    # The schedule's next start meanwhile checked nothing: the unfinished pass goes first
    assert held_back["status"] == "SUCCEEDED"
    assert json.loads(held_back["output"])["planned"]["pass"] | {"segments": None} == {
        "passId": PASS,
        "totalSegments": SEGMENTS,
        "segments": None,
        "busy": True,
    }
    assert checks == checked_then
    assert finished["status"] == "SUCCEEDED"
    output = json.loads(finished["output"])
    assert (output["checked"], output["segmentsDone"]) == (30, SEGMENTS)
    assert checks == Counter(dict.fromkeys(ids, 1))
