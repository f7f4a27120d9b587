"""What importing each handler loads: its own models, and no heavy library it does not use.

Each handler is imported as Lambda imports it, in a fresh interpreter with the layer and the
function's directory first on the path. The X-Ray SDK loads only when tracing is on, and then at the
first invocation; PyJWT and cryptography only where tokens or device-key signatures are handled;
phonenumbers only where a number is parsed; services and adapters when the container is first asked
for them. No timing here: bench/cold_start.py measures.

And on the layer ``sam build`` made, with nothing but what Lambda gives (``tests/lambda_runtime.py``):
every handler imports, and reaches neither the local stack, the CLI nor a development dependency.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.lambda_runtime import LOCAL_ONLY_MODULES, LambdaRuntime, development_modules

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "core"
FUNCTIONS = ROOT / "functions"
HANDLERS = sorted(path.parent.name for path in FUNCTIONS.glob("*/app.py"))

# The capability whose request and response models each HTTP handler declares.
MODELS = {
    **dict.fromkeys(["start", "validate", "challenge", "complete"], "staged_models"),
    "token": "token_models",
    **dict.fromkeys(["unify", "unify_status", "unify_bind", "device_revoke"], "unify_models"),
    **dict.fromkeys(
        [
            "client_session",
            "client_mobile_auth",
            "mobile_auth_callback",
            "client_otp",
            "client_otp_verify",
            "client_instant_link",
            "client_device_key",
            "client_device_key_register",
        ],
        "client_models",
    ),
    **dict.fromkeys(["verify", "verify_batch"], "verify_models"),
    **dict.fromkeys(
        [
            "identity_enroll",
            "identity_batch",
            "identity_list",
            "identity_get",
            "identity_disenroll",
            "identity_activate",
            "identity_deactivate",
            "identity_lookup",
        ],
        "identity_models",
    ),
    **dict.fromkeys(
        ["decisions_list", "decisions_get", "decisions_summary", "decisions_erase"], "decision_models"
    ),
}
CAPABILITY_MODELS = {f"phoneid.api.{module}" for module in MODELS.values()}

# Handlers that sign or verify tokens, or check a device key's signature.
SIGNATURES = {
    "authorizer",
    "client_authorizer",
    "websocket",
    "token",
    "jwks",
    "start",
    "unify",
    "client_device_key",
    "client_device_key_register",
}
# Handlers that parse a phone number or read its numbering plan (line type).
PHONE_NUMBERS = {
    "start",
    "complete",
    "unify",
    "unify_status",
    "unify_bind",
    "verify",
    "verify_batch",
    "identity_enroll",
    "identity_batch",
    "identity_get",
    "identity_lookup",
    "client_otp",
    "client_instant_link",
    "connect_validate",
    "connect_verify_chunk",
    "webhook_monitor",
}

_WATCHED = ("aws_xray_sdk", "jwt", "cryptography", "phonenumbers", "phoneid")


def _lambda_environment(name: str, *, tracing: bool) -> dict[str, str]:
    """Lambda's own variables; tracing on is Lambda's default, off is POWERTOOLS_TRACE_DISABLED."""
    environment = {
        **os.environ,
        "AWS_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "LAMBDA_TASK_ROOT": str(FUNCTIONS / name),
        "POWERTOOLS_SERVICE_NAME": "phoneid",
        "POWERTOOLS_TRACE_DISABLED": "false" if tracing else "true",
    }
    environment.pop("AWS_SAM_LOCAL", None)
    return environment


def _run(code: str, environment: dict[str, str]) -> str:
    """``code`` in a fresh interpreter (-P: neither the cwd nor a script's directory on its path)."""
    done = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-P", "-c", code],
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@functools.cache
def _loaded(name: str, *, tracing: bool = False) -> frozenset[str]:
    """The watched modules in sys.modules once ``import app`` of functions/<name> returns."""
    paths = [str(LAYER), str(FUNCTIONS / name)]
    code = (
        f"import json, sys; sys.path[:0] = {paths!r}; import app; "
        f"print(json.dumps([m for m in sys.modules if m.split('.')[0] in {_WATCHED!r}]))"
    )
    return frozenset(json.loads(_run(code, _lambda_environment(name, tracing=tracing))))


@pytest.mark.parametrize("name", HANDLERS)
def test_no_handler_imports_the_xray_sdk_whether_tracing_is_on_or_off(name: str) -> None:
    assert not {m for m in _loaded(name) if m.startswith("aws_xray_sdk")}
    assert not {m for m in _loaded(name, tracing=True) if m.startswith("aws_xray_sdk")}


@pytest.mark.parametrize("name", [n for n in HANDLERS if n not in SIGNATURES])
def test_a_handler_that_handles_no_token_or_signature_loads_neither_pyjwt_nor_cryptography(name: str) -> None:
    assert not {m for m in _loaded(name) if m.split(".")[0] in ("jwt", "cryptography")}


@pytest.mark.parametrize("name", [n for n in HANDLERS if n not in PHONE_NUMBERS])
def test_a_handler_that_parses_no_phone_number_does_not_load_phonenumbers(name: str) -> None:
    assert not {m for m in _loaded(name) if m.split(".")[0] == "phonenumbers"}


@pytest.mark.parametrize("name", HANDLERS)
def test_a_handler_loads_its_own_models_and_no_other_capabilitys(name: str) -> None:
    own = {f"phoneid.api.{MODELS[name]}"} if name in MODELS else set()
    assert _loaded(name) & CAPABILITY_MODELS == own


@pytest.mark.parametrize("name", HANDLERS)
def test_a_handler_builds_its_services_and_adapters_on_first_use_not_at_import(name: str) -> None:
    assert not {m for m in _loaded(name) if m.startswith(("phoneid.services.", "phoneid.adapters."))}


def test_every_http_handler_has_its_capability_here() -> None:
    # A new handler with a body names its models module above, so the checks cover it
    declared = {n for n in HANDLERS if "make_app" in (FUNCTIONS / n / "app.py").read_text()}
    # (the operator's notifications are parsed by the domain: phoneid.domain.push)
    assert declared - {"jwks", "instant_link", "operator_notifications"} == set(MODELS)


def test_with_tracing_on_the_first_invocation_loads_the_xray_sdk_and_patches_boto3() -> None:
    # Given a traced handler, imported in Lambda with tracing on: no SDK yet
    code = (
        f"import json, sys; sys.path[:0] = [{str(LAYER)!r}]; "
        "from phoneid.tasks import traced; "
        "handler = traced(lambda event, context: {'answered': True}); "
        "before = 'aws_xray_sdk' in sys.modules; "
        "answer = handler({}, None); "
        "from botocore.client import BaseClient; "
        "print(json.dumps([before, answer, hasattr(BaseClient._make_api_call, '__wrapped__')]))"
    )
    environment = {
        **_lambda_environment("traced", tracing=True),
        "_X_AMZN_TRACE_ID": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
        "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000",
    }

    # When it is first invoked
    before, answer, patched = json.loads(_run(code, environment))

    # Then it answered, under the tracer: the SDK loaded then and boto3 is patched
    assert before is False
    assert answer == {"answered": True}
    assert patched is True


def test_with_tracing_off_an_invocation_loads_no_xray_sdk() -> None:
    code = (
        f"import json, sys; sys.path[:0] = [{str(LAYER)!r}]; "
        "from phoneid.tasks import traced; "
        "answer = traced(lambda event, context: {'answered': True})({}, None); "
        "print(json.dumps([answer, 'aws_xray_sdk' in sys.modules]))"
    )
    answer, loaded = json.loads(_run(code, _lambda_environment("traced", tracing=False)))
    assert answer == {"answered": True}
    assert loaded is False


# --- on the built layer, as on Lambda -------------------------------------------------------------------

# One interpreter imports every handler in turn, each with its own code first on the path and then
# taken off again: what each import adds to sys.modules is that handler's.
_IMPORT_EVERY_HANDLER = """
import importlib, json, sys
sys.path[:0] = {paths!r}
report = {{}}
for name, code in {handlers!r}:
    sys.path.insert(0, code)
    before = set(sys.modules)
    try:
        importlib.import_module("app")
        error = None
    except BaseException as failure:
        error = f"{{type(failure).__name__}}: {{failure}}"
    report[name] = {{"error": error, "loaded": sorted(set(sys.modules) - before)}}
    sys.modules.pop("app", None)
    sys.path.remove(code)
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def imported_on_lambda(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each handler's import on the built layer: its error, if any, and the modules it loaded."""
    runtime = LambdaRuntime(tmp_path_factory.mktemp("lambda"))
    code = _IMPORT_EVERY_HANDLER.format(
        paths=runtime.sys_path,
        handlers=[(name, str(FUNCTIONS / name)) for name in HANDLERS],
    )
    environment = {  # Lambda's own variables, tracing on as Tracing: Active has it
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "phoneid",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "POWERTOOLS_SERVICE_NAME": "phoneid",
    }
    done = subprocess.run(  # noqa: S603 - our own interpreter and code
        runtime.command("-c", code),
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return report


def _not_for_lambda(module: str) -> bool:
    local_only = any(module == name or module.startswith(f"{name}.") for name in LOCAL_ONLY_MODULES)
    return local_only or module.split(".")[0] in development_modules()


def test_every_handler_imports_on_the_built_layer_with_only_what_lambda_gives(
    imported_on_lambda: dict[str, dict[str, Any]],
) -> None:
    assert set(imported_on_lambda) == set(HANDLERS)
    assert {name: report["error"] for name, report in imported_on_lambda.items() if report["error"]} == {}


def test_no_handler_reaches_the_local_stack_the_cli_or_a_development_dependency(
    imported_on_lambda: dict[str, dict[str, Any]],
) -> None:
    reached = {
        name: [module for module in report["loaded"] if _not_for_lambda(module)]
        for name, report in imported_on_lambda.items()
    }
    assert {name: modules for name, modules in reached.items() if modules} == {}
