"""The TypeScript server SDK (clients/typescript) as the tests build it: a copy of the package in a
temporary folder, compiled with the repository's pinned tsc, so that tests running at once never
write into one another's output (docs/adr/0107-the-typescript-server-sdk.md)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "clients" / "typescript"
NODE_BIN = ROOT / "node_modules" / ".bin"


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - the repository's own node tools
        command, cwd=cwd, env=env or None, capture_output=True, text=True, timeout=300, check=False
    )


def build(tmp: Path, *projects: str) -> Path:
    """The package copied into ``tmp`` and compiled: its sources, then each project named (``examples``,
    ``test``), each to its ``dist/``. Returns the copy's folder."""
    copy = tmp / "typescript"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("dist", "node_modules"))
    (copy / "node_modules").symlink_to(ROOT / "node_modules")  # @types/node, as an install has it
    # One tsc in build mode for all of them: the projects in order, the standard library and
    # @types/node read once (three `tsc -p` read them three times).
    configs = ["tsconfig.json", *(f"{project}/tsconfig.json" for project in projects)]
    compiled = run([str(NODE_BIN / "tsc"), "--build", *configs], copy)
    assert compiled.returncode == 0, f"tsc --build {' '.join(configs)}:\n{compiled.stdout}{compiled.stderr}"
    return copy


def generate_command(output: Path) -> list[str]:
    """The package's `npm run generate` (openapi-typescript and its options), writing to ``output``."""
    script: str = json.loads((PACKAGE / "package.json").read_text())["scripts"]["generate"]
    words = shlex.split(script)
    assert words[0] == "openapi-typescript", script
    assert words[-2:] == ["--output", "src/schema.ts"], script
    return [str(NODE_BIN / "openapi-typescript"), *words[1:-1], str(output)]
