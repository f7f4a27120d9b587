"""The change monitor's pass on `phoneid dev`: `POST /_local/monitor` runs the monitor's workflow
(moto's Step Functions in the server, the functions in their worker processes) over every segment,
and `phoneid webhooks monitor-status --local` shows the pass."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.conftest import DevServer, HttpApi, start_dev_server

pytestmark = pytest.mark.e2e

NUMBERS = ("+12025550171", "+12025550172", "+12025550173")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    running = start_dev_server(tmp_path_factory.mktemp("monitor"))
    yield running
    if running.process.poll() is None:
        running.stop()


def test_a_pass_runs_through_the_workflow_and_its_status_is_shown(server: DevServer) -> None:
    with httpx.Client(base_url=server.base_url, timeout=120) as http:
        # Given three identities enrolled through the API
        integrator = HttpApi(http).integrator()
        for number in NUMBERS:
            assert integrator.post("/v3/identity", {"phoneNumber": number}).status == 200

        # When a monitor pass runs now
        answered = http.post("/_local/monitor")

    # Then every segment was checked and each identity once; the CLI shows the finished pass
    assert answered.status_code == 200, answered.text
    summary = answered.json()
    assert summary["segmentsDone"] == summary["totalSegments"] == 16
    assert (summary["checked"], summary["events"]) == (3, 0)
    assert summary["finishedAt"] is not None
    shown = server.cli("webhooks", "monitor-status", "--local", "--json")
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert (status["passId"], status["state"], status["checked"]) == (summary["passId"], "finished", 3)
