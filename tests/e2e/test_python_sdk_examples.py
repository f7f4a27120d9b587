"""The Python server SDK's examples (clients/python/examples) run as an integrator runs them, against
the running `phoneid dev`, each with a fresh client of the stack."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import DevServer

pytestmark = pytest.mark.e2e

EXAMPLES = Path(__file__).resolve().parents[2] / "clients" / "python" / "examples"
SETTINGS = {"B", "ID", "SECRET"}  # and PHONEID_*: none of the test's own reaches an example


def outside_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PHONEID_") and k not in SETTINGS}


def run_example(name: str, settings: dict[str, str]) -> str:
    """The example's output; it must exit 0."""
    environment = {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith("PHONEID_") and k not in {"B", "ID", "SECRET"}
        },
        **settings,
    }
    finished = subprocess.run(  # noqa: S603 - the repository's own example
        [sys.executable, str(EXAMPLES / name)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    return finished.stdout


@pytest.fixture
def settings(dev_server: DevServer) -> dict[str, str]:
    """What the banner of `make dev` prints, for a new client of the stack."""
    created = httpx.post(f"{dev_server.base_url}/_local/clients", json={}, timeout=30)
    assert created.status_code == 201, created.text
    client = created.json()
    return {
        "PHONEID_BASE_URL": dev_server.base_url,
        "PHONEID_CLIENT_ID": client["client_id"],
        "PHONEID_CLIENT_SECRET": client["client_secret"],
    }


def test_the_staged_flow_example_passes_each_step(settings: dict[str, str]) -> None:
    output = run_example("staged_flow.py", settings)

    assert re.search(
        r"^start: correlationId [0-9a-f-]{36}, next \{'v3-validate': '/v3/validate'\}$", output, re.M
    )
    assert "validate: success True, challengeMissing True\n" in output
    assert "challenge: success True\n  individual: Kira Petrova\n" in output
    assert (
        "complete: success True, evaluation {'identification': 'pass', 'authentication': 'pass', "
        "'compliance': 'pass', 'risk': 'pass'}\n"
    ) in output


def test_the_verify_example_verifies_and_enrolls(settings: dict[str, str]) -> None:
    # The banner's `export` line names them B, ID and SECRET: the examples take those too
    short = {"B": settings["PHONEID_BASE_URL"], "ID": settings["PHONEID_CLIENT_ID"]}
    output = run_example("verify.py", {**short, "SECRET": settings["PHONEID_CLIENT_SECRET"]})

    assert "verify: success true, assurance AL2\n" in output
    assert re.search(r"^  enrolled True, serviceId [0-9a-f-]{36}$", output, re.M)


def test_the_identity_manager_example_enrolls_reads_looks_up_and_disenrolls(settings: dict[str, str]) -> None:
    output = run_example("identity_manager.py", settings)

    service_id = re.search(r"^enroll: serviceId ([0-9a-f-]{36})$", output, re.M)
    assert service_id is not None, output
    assert re.search(r"^get: \+12025550123, active True, customer example-[0-9a-f]{8}$", output, re.M)
    assert f"lookup: 1 identities of +12025550123, this customer's: ['{service_id[1]}']\n" in output
    assert "disenroll: done\nget again: 404 8011 Identity not found\n" in output


def test_the_decisions_example_lists_reads_summarises_and_erases_the_records(
    settings: dict[str, str],
) -> None:
    output = run_example("decisions.py", settings)

    assert output == (
        "verify, verify/batch: 3 decisions\n"
        "list: 2 records of the number ending 12, newest first: verify-batch pass, verify pass\n"
        "get: verify-batch error (code 8007), number ..99, tier sandbox\n"
        "summary: 3 decisions, 2 passed, 0 failed, 1 errors; verify 1, verify-batch 2\n"
        "erase: 2 records of the number\n"
        "get Lena's item: 404 8011 Decision not found\n"
    )


def test_the_webhook_example_verifies_the_sample_and_refuses_it_altered_or_old() -> None:
    output = run_example("webhook_check.py", {})

    assert output == (
        "verified: SIM_SWAP for +12025550143 (serviceId 72beb529-42d4-49fd-9621-f2a2e08ecbeb)\n"
        "altered delivery refused: the signature does not match\n"
        "old delivery refused: the timestamp is more than 300 s from now\n"
    )


def test_an_example_without_settings_says_what_to_set() -> None:
    finished = subprocess.run(  # noqa: S603 - the repository's own example
        [sys.executable, str(EXAMPLES / "verify.py")],
        env=outside_environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert finished.returncode == 1
    assert "set PHONEID_BASE_URL (or B): `make dev` prints it" in finished.stderr
