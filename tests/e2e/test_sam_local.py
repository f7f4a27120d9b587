"""`sam local start-api` against `phoneid dev` (README, "sam local"), checked without Docker.

SAM runs each function in a container holding its code, the layer `sam build` made and the
runtime's boto3, with an environment of SAM's making: the variables the template declares for the
function, those the env-vars file sets in their place, and the AWS variables SAM adds. Here each
function runs in a fresh interpreter with that import path (``tests/lambda_runtime.py``) and exactly
that environment, computed by SAM's own code from template.yaml, the file a running `phoneid dev`
wrote and the README's command line. Each is invoked once with a sample of ``events/`` (or a minimal
event of its kind) and must answer from the running stack: no import or configuration error.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest

from phoneid_dev.events import method_arn, rest_event, websocket_event
from phoneid_dev.template import Route, template
from tests.e2e.conftest import DevServer, start_dev_server
from tests.harness import EVENTS
from tests.lambda_runtime import ROOT, LambdaRuntime
from tests.sandbox_numbers import OTP_PASS

pytestmark = pytest.mark.e2e

SAMPLE_CLIENT_ID = "0123456789abcdef0123456789abcdef"
SAMPLE_CORRELATION_ID = "4c2d0b0e-6f7a-4d1e-9a53-0c6f2b8e1d11"
# What the container image's runtime sets itself, beside SAM's variables.
RUNTIME_VARIABLES = {
    "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
    "LAMBDA_RUNTIME_DIR": "/var/runtime",
    "LANG": "en_US.UTF-8",
    "TZ": ":UTC",
    "PATH": "/usr/local/bin:/usr/bin/:/bin",
}
API_FUNCTIONS = sorted({route.function for route in template().routes})
AUTHORIZERS = {name: authorizer.function for name, authorizer in template().authorizers.items()}
TASKS = sorted(
    set(template().functions)
    - set(API_FUNCTIONS)
    - set(AUTHORIZERS.values())
    - {template().websocket_function}
)
# The samples of these name a batch this stack never had: its answer is that it has none.
NO_SUCH_BATCH = {"ConnectVerifyChunkFunction", "ConnectDeliverFunction"}
# The samples of these act on the pass the plan's sample plans: they run after it, as in the workflow.
AFTER_THE_PLAN = {"WebhookMonitorFunction", "MonitorSummaryFunction"}


def readme_sam_command() -> list[str]:
    """The README's `sam local start-api` line, continuation lines joined, split as a shell would."""
    text = (ROOT / "README.md").read_text().replace("\\\n", " ")
    [line] = [line for line in text.splitlines() if "sam local start-api" in line and "--env-vars" in line]
    return shlex.split(line.split("&&")[-1])


def option(words: list[str], name: str) -> str:
    return words[words.index(name) + 1]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """A stack of this module's own: its functions run a monitor pass and claim a batch."""
    server = start_dev_server(tmp_path_factory.mktemp("sam-local"), PHONEID_SFTP_PORT="0")
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture(scope="module")
def env_vars(stack: DevServer) -> dict[str, dict[str, str]]:
    written: dict[str, dict[str, str]] = json.loads(
        stack.state_file.with_name("sam-env-vars.json").read_text()
    )
    return written


def sam_environments(env_vars: dict[str, Any], home: Path) -> dict[str, tuple[dict[str, str], Path, str]]:
    """Each function's environment, code directory and handler as `sam local start-api` would give
    them, run as the README says (its credentials, region and env-vars file) from a shell with no
    other AWS or PhoneID setting."""
    from samcli.commands.local.lib.local_lambda import LocalLambdaRunner
    from samcli.lib.providers.sam_function_provider import SamFunctionProvider
    from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider

    words = readme_sam_command()
    program = next(index for index, word in enumerate(words) if Path(word).name == "sam")
    shell = {"PATH": os.environ["PATH"], "HOME": str(home)}
    shell |= dict(word.split("=", 1) for word in words[:program] if "=" in word)
    # SAM reads the shell's environment and its boto3 session's credentials while it makes them
    with mock.patch.dict(os.environ, shell, clear=True):
        stacks, _ = SamLocalStackProvider.get_stacks(str(ROOT / "template.yaml"))
        functions = SamFunctionProvider(stacks)
        runner = LocalLambdaRunner(
            local_runtime=None,  # no container: only the environments are asked for
            function_provider=functions,
            cwd=str(ROOT),
            real_path=str(ROOT),
            aws_region=option(words, "--region"),
            env_vars_values=env_vars,
        )
        return {  # _make_env_vars: what SAM's invoke gives the container (samcli 1.170)
            function.name: (
                runner._make_env_vars(function).resolve(),
                ROOT / function.codeuri,
                function.handler,
            )
            for function in functions.get_all()
        }


def _route(logical_id: str) -> Route | None:
    return next((route for route in template().routes if route.function == logical_id), None)


def _sample(logical_id: str, replacements: dict[str, str]) -> dict[str, Any] | None:
    directory = EVENTS / Path(template().functions[logical_id].code_uri).name
    samples = sorted(directory.glob("*.json"))
    if not samples:
        return None
    text = samples[0].read_text()
    for placeholder, value in replacements.items():
        text = text.replace(placeholder, value)
    event: dict[str, Any] = json.loads(text)
    return event


def events(
    replacements: dict[str, str], auth_token: str, desktop_auth_token: str
) -> dict[str, dict[str, Any]]:
    """One event per function: its first sample, placeholders filled; else a minimal one of its kind."""
    samples = {logical_id: _sample(logical_id, replacements) for logical_id in template().functions}
    # An authorizer's context, as a sample of a route behind it has it
    contexts = {}
    for route in template().routes:
        sample = samples[route.function]
        if route.authorizer and sample and route.authorizer not in contexts:
            contexts[route.authorizer] = sample["requestContext"]["authorizer"]
    guarded = {AUTHORIZERS[r.authorizer]: r for r in reversed(template().routes) if r.authorizer}
    found: dict[str, dict[str, Any]] = {}
    for logical_id, sample in samples.items():
        route = _route(logical_id)
        if sample is not None:
            found[logical_id] = sample
        elif route is not None:
            path = re.sub(r"\{[^}]+\}", "unknown", route.path)
            found[logical_id] = rest_event(
                method=route.method,
                path=path,
                resource=route.path,
                headers={"content-type": "application/json"},
                body="{}" if route.method in ("POST", "DELETE") else None,
                authorizer=contexts.get(route.authorizer) if route.authorizer else None,
                path_parameters=route.parameters(path),
            )
        elif logical_id == template().websocket_function:
            found[logical_id] = websocket_event(
                route_key="$connect",
                connection_id=uuid.uuid4().hex[:16],
                query={"authToken": desktop_auth_token},
                domain_name="localhost",
            )
        elif logical_id in guarded:
            found[logical_id] = {
                "type": "TOKEN",
                "authorizationToken": f"Bearer {auth_token}",
                "methodArn": method_arn(guarded[logical_id].method, guarded[logical_id].path),
            }
        else:
            found[logical_id] = {}  # a schedule's (no input); for the Connect catch-all, no upload
    return found


def _invoke(
    runtime: LambdaRuntime, environment: dict[str, str], code: Path, handler: str, event: dict[str, Any]
) -> dict[str, Any]:
    """One invocation in a fresh process, as SAM's container runs it; Lambda's timeout kills it."""
    name = environment["AWS_LAMBDA_FUNCTION_NAME"]
    event_file, answer_file = runtime.work / f"{name}.event.json", runtime.work / f"{name}.answer.json"
    event_file.write_text(json.dumps(event))
    timeout = float(environment["AWS_LAMBDA_FUNCTION_TIMEOUT"])
    try:
        done = subprocess.run(  # noqa: S603 - our own interpreter and bootstrap
            runtime.invoke_command(code, handler, event_file, answer_file),
            env={**environment, **RUNTIME_VARIABLES, "LAMBDA_TASK_ROOT": str(code), "_HANDLER": handler},
            capture_output=True,
            text=True,
            timeout=timeout + 30,  # a process start on a busy machine is not the function's time
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": {"errorType": "Sandbox.Timedout", "errorMessage": f"over {timeout:g} s"}}
    if not answer_file.exists():
        return {"error": {"errorType": "Runtime.ExitError", "errorMessage": done.stderr[-2000:]}}
    answer: dict[str, Any] = json.loads(answer_file.read_text())
    return answer


@pytest.fixture(scope="module")
def client(stack: DevServer) -> dict[str, str]:
    """A client of the stack, its access token, a mobile flow it started and a desktop one (their
    authTokens: the client API's samples act on the first, the WebSocket waits for the second)."""
    with httpx.Client(base_url=stack.base_url, timeout=30) as http:
        created = http.post("/_local/clients", json={"name": "sam local"}).json()
        granted = http.post("/token", data={"grant_type": "client_credentials", **created})
        token = granted.json()["access_token"]

        def started(path: str, body: dict[str, str]) -> dict[str, str]:
            answer = http.post(path, json=body, headers={"authorization": f"Bearer {token}"})
            assert answer.status_code == 200, answer.text
            flow: dict[str, str] = answer.json()
            return flow

        mobile = started("/v3/unify", {"phoneNumber": OTP_PASS, "possessionType": "mobile"})
        desktop = started(
            "/v3/start",
            {
                "flowType": "desktop",
                "phoneNumber": OTP_PASS,
                "finalTargetUrl": "https://shop.example.com/done",
            },
        )
    return {
        **created,
        "access_token": token,
        "correlation_id": mobile["correlationId"],
        "auth_token": mobile["authToken"],
        "desktop_auth_token": desktop["authToken"],
    }


@pytest.fixture(scope="module")
def answers(
    env_vars: dict[str, Any], client: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """Every function invoked once, as `sam local start-api` would run it against the stack."""
    work = tmp_path_factory.mktemp("sam-functions")
    runtime = LambdaRuntime(work)
    replacements = {
        SAMPLE_CLIENT_ID: client["client_id"],
        SAMPLE_CORRELATION_ID: client["correlation_id"],
        "<ACCESS_TOKEN>": client["access_token"],
        "<AUTH_TOKEN>": client["auth_token"],
        "<CLIENT_ID>": client["client_id"],
        "<CLIENT_SECRET>": client["client_secret"],
    }
    sent = events(replacements, client["auth_token"], client["desktop_auth_token"])
    environments = sam_environments(env_vars, work)
    with ThreadPoolExecutor(max_workers=4) as pool:

        def started(logical_ids: Iterable[str]) -> dict[str, Future[dict[str, Any]]]:
            return {
                logical_id: pool.submit(_invoke, runtime, *environments[logical_id], sent[logical_id])
                for logical_id in logical_ids
            }

        running = started(set(environments) - AFTER_THE_PLAN)
        running["MonitorPlanFunction"].result()
        running |= started(AFTER_THE_PLAN)
        return {logical_id: future.result() for logical_id, future in running.items()}


def test_the_file_sets_what_each_function_declares_pointing_it_at_the_stack(
    stack: DevServer, env_vars: dict[str, dict[str, str]]
) -> None:
    state = json.loads(stack.state_file.read_text())
    shared = env_vars["Parameters"]

    # One member for all, one for each function; together exactly what the template declares
    assert set(env_vars) == {"Parameters", *template().functions}
    for logical_id, function in template().functions.items():
        assert set(function.environment) == set(shared) | set(env_vars[logical_id]), logical_id
    # boto3 pointed at the stack's AWS, the settings at its tables, keys, bucket and topic
    assert shared["AWS_ENDPOINT_URL"] == state["awsEndpointUrl"]
    assert {name: state["environment"][name] for name in shared if name != "AWS_ENDPOINT_URL"} == {
        name: value for name, value in shared.items() if name != "AWS_ENDPOINT_URL"
    }
    assert (
        env_vars["WebhookMonitorFunction"]["WEBHOOK_QUEUE_URL"] == state["environment"]["WEBHOOK_QUEUE_URL"]
    )


def test_the_readme_runs_sam_with_that_file_on_the_hosts_network_in_the_stacks_region(
    env_vars: dict[str, dict[str, str]],
) -> None:
    words = readme_sam_command()

    assert option(words, "--env-vars") == ".phoneid/sam-env-vars.json"
    assert option(words, "--docker-network") == "host"  # the container reaches the stack on loopback
    assert option(words, "--region") == env_vars["Parameters"]["SANDBOX_SMS_TOPIC_ARN"].split(":")[3]
    assert option(words, "--port") != "3000"  # phoneid dev's


@pytest.mark.parametrize("logical_id", API_FUNCTIONS)
def test_each_api_function_answers_with_a_status_from_the_stack(
    answers: dict[str, dict[str, Any]], logical_id: str
) -> None:
    answer = answers[logical_id]

    assert "error" not in answer, answer["error"]
    assert answer["result"]["statusCode"] < 500, answer["result"]


@pytest.mark.parametrize("logical_id", sorted(AUTHORIZERS.values()))
def test_each_authorizer_allows_the_token_the_stack_issued(
    answers: dict[str, dict[str, Any]], client: dict[str, str], logical_id: str
) -> None:
    answer = answers[logical_id]

    assert "error" not in answer, answer["error"]
    assert answer["result"]["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert answer["result"]["context"]["clientId"] == client["client_id"]


def test_the_websocket_function_takes_the_flows_connection(answers: dict[str, dict[str, Any]]) -> None:
    assert answers[template().websocket_function] == {"result": {"statusCode": 200}}


@pytest.mark.parametrize("logical_id", TASKS)
def test_each_task_answers_from_the_stack(answers: dict[str, dict[str, Any]], logical_id: str) -> None:
    answer = answers[logical_id]

    if logical_id in NO_SUCH_BATCH:
        assert answer.get("error", {}).get("errorType") == "BatchNotFound", answer
    else:
        assert "error" not in answer, answer["error"]
        assert isinstance(answer["result"], dict)


def test_a_token_granted_under_sam_opens_the_running_stacks_api(
    answers: dict[str, dict[str, Any]], stack: DevServer
) -> None:
    # Given the access token the token function granted, run as SAM runs it
    token = json.loads(answers["TokenFunction"]["result"]["body"])["access_token"]

    # When phoneid dev is called with it
    started = httpx.post(
        f"{stack.base_url}/v3/start",
        json={"flowType": "mobile", "phoneNumber": OTP_PASS},
        headers={"authorization": f"Bearer {token}"},
        timeout=30,
    )

    # Then it is the stack's own: same client, same signing keys
    assert started.status_code == 200, started.text
