"""Cold import of every handler against a bare ``import boto3``, in fresh interpreters.

For each ``functions/<name>/app.py``, runs interleaved pairs of new processes: ``import boto3`` and
``import app`` with the layer and the function's directory first on the path, both with the
environment the function has on Lambda (the template's Globals and the function's own variables,
with placeholder values; LAMBDA_TASK_ROOT, region and credentials as Lambda sets them, so Powertools
sees tracing on). Each process's wall time is measured from this side (interpreter start included).
Prints, per handler, median and min of both (ms) and the ratio of the medians; then the worst ratio.

These are figures for comparing changes on one machine, not Lambda's init duration (Lambda's
runtime, CPU and file system differ; its layer holds no compiled ``.pyc``).

    .venv/bin/python bench/cold_start.py [--pairs 15] [--only start,token]
    .venv/bin/python bench/cold_start.py --importtime start [--top 30]   # where one handler's import goes
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

# The repository in place of bench/, where http.py would shadow the standard module.
sys.path[0] = str(Path(__file__).resolve().parents[1])

import yaml  # noqa: E402 - after the path is set

ROOT = Path(__file__).resolve().parents[1]
LAYER = ROOT / "layers" / "core"
FUNCTIONS = ROOT / "functions"
BASELINE = "import boto3"


class _TemplateLoader(yaml.SafeLoader):
    """Reads template.yaml for its variables: ``!Ref`` stays a reference, any other intrinsic is None."""


def _intrinsic(loader: yaml.SafeLoader, tag: str, node: yaml.Node) -> object:
    if tag == "Ref" and isinstance(node, yaml.ScalarNode):
        return {"Ref": loader.construct_scalar(node)}
    return None


_TemplateLoader.add_multi_constructor("!", _intrinsic)


def _template() -> dict[str, object]:
    with (ROOT / "template.yaml").open() as file:
        document: dict[str, object] = yaml.load(file, Loader=_TemplateLoader)  # noqa: S506 - safe loader
    return document


def _variables(block: object, defaults: dict[str, str]) -> dict[str, str]:
    """A function's Environment.Variables: a parameter's default, else a placeholder where the
    template computes the value (a table's name, a key's id)."""
    variables = ((block or {}).get("Environment") or {}).get("Variables") or {}  # type: ignore[attr-defined]
    values: dict[str, str] = {}
    for name, value in variables.items():
        if isinstance(value, dict) or value is None:
            value = defaults.get((value or {}).get("Ref", ""), f"placeholder-{name.lower()}")
        values[name] = str(value)
    return values


def lambda_environments() -> dict[str, dict[str, str]]:
    """Per function directory name, the environment its handler is imported with on Lambda."""
    template = _template()
    defaults = {
        name: str(parameter.get("Default", ""))
        for name, parameter in (template.get("Parameters") or {}).items()  # type: ignore[attr-defined]
    }
    shared = _variables((template.get("Globals") or {}).get("Function"), defaults)  # type: ignore[attr-defined]
    environments: dict[str, dict[str, str]] = {}
    for logical_id, resource in (template.get("Resources") or {}).items():  # type: ignore[attr-defined]
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        properties = resource.get("Properties") or {}
        code = str(properties.get("CodeUri") or "")
        if not code.startswith("functions/"):
            continue
        name = code.removeprefix("functions/").strip("/")
        environments[name] = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_LAMBDA_FUNCTION_NAME": logical_id,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
            "AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129:2000",
            "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
            "LAMBDA_TASK_ROOT": str(FUNCTIONS / name),
            "_HANDLER": "app.handler",
            **shared,
            **_variables(properties, defaults),
        }
    return environments


def handler_import(name: str) -> str:
    paths = [str(LAYER), str(FUNCTIONS / name)]
    return f"import sys; sys.path[:0] = {paths!r}; import app"


def _run(code: str, environment: dict[str, str], *options: str) -> tuple[float, str]:
    """Wall time (ms) of a fresh interpreter running ``code``; -P keeps bench/ and the cwd off its path."""
    began = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-P", *options, "-c", code],
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = (time.perf_counter() - began) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{code!r} failed:\n{done.stderr}")
    return elapsed, done.stderr


def measure(name: str, environment: dict[str, str], pairs: int) -> tuple[list[float], list[float]]:
    """Interleaved pairs (baseline then handler), so that a busy moment of the machine hits both."""
    _run(BASELINE, environment)  # compiled files written, page cache warm: no first-run outlier
    _run(handler_import(name), environment)
    baseline, handler = [], []
    for _ in range(pairs):
        baseline.append(_run(BASELINE, environment)[0])
        handler.append(_run(handler_import(name), environment)[0])
    return baseline, handler


def report(pairs: int, only: list[str] | None) -> None:
    environments = lambda_environments()
    names = sorted(p.parent.name for p in FUNCTIONS.glob("*/app.py"))
    if only:
        names = [n for n in names if n in only]
    print(f"cold import vs '{BASELINE}', {pairs} interleaved pairs each (ms)")
    print(f"  {'handler':<28} {'boto3 med':>9} {'min':>6}   {'app med':>8} {'min':>6}   {'ratio':>5}")
    ratios: dict[str, float] = {}
    for name in names:
        baseline, handler = measure(name, environments[name], pairs)
        ratio = statistics.median(handler) / statistics.median(baseline)
        ratios[name] = ratio
        print(
            f"  {name:<28} {statistics.median(baseline):9.1f} {min(baseline):6.1f}   "
            f"{statistics.median(handler):8.1f} {min(handler):6.1f}   {ratio:5.2f}",
            flush=True,
        )
    worst = max(ratios, key=ratios.__getitem__)
    print(
        f"worst ratio {ratios[worst]:.2f} ({worst}); median of ratios "
        f"{statistics.median(ratios.values()):.2f} over {len(ratios)} handlers"
    )


def importtime(name: str, top: int) -> None:
    """The modules whose import (with their own imports) took longest, from ``-X importtime``."""
    environment = lambda_environments()[name]
    _run(handler_import(name), environment)
    _, log = _run(handler_import(name), environment, "-X", "importtime")
    rows: list[tuple[int, int, str]] = []
    for line in log.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, module = line.removeprefix("import time:").split("|", 2)
        rows.append((int(cumulative), int(own), module.rstrip()))
    print(f"{name}: {len(rows)} modules, {sum(r[1] for r in rows) / 1000:.1f} ms of own import time")
    print(f"  {'cumulative':>10} {'own':>7}  module (us)")
    for cumulative, own, module in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative:10d} {own:7d}  {module}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--only", type=lambda value: value.split(","), default=None)
    parser.add_argument("--importtime", metavar="HANDLER")
    parser.add_argument("--top", type=int, default=40)
    arguments = parser.parse_args()
    if arguments.importtime:
        importtime(arguments.importtime, arguments.top)
    else:
        report(arguments.pairs, arguments.only)


if __name__ == "__main__":
    main()
