"""Where a running ``phoneid dev`` tells other processes (the CLI with ``--local``) how to reach it.

The state file (``PHONEID_DEV_STATE``, default ``.phoneid/dev.json`` in the repository) holds
``DevStack.facts``; beside it, what ``sam local start-api --env-vars`` takes to run the functions
against the stack (README). Both are written whole and removed by the stack that wrote them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from phoneid_dev.template import RepositoryNotFound, repository_root

STATE_VARIABLE = "PHONEID_DEV_STATE"


def default_state_file() -> Path:
    """``PHONEID_DEV_STATE``, else ``.phoneid/dev.json`` in the repository (outside one: here)."""
    configured = os.environ.get(STATE_VARIABLE)
    if configured:
        return Path(configured)
    try:
        directory = repository_root()
    except RepositoryNotFound:  # no stack can start here; the reader says none is running
        directory = Path.cwd()
    return directory / ".phoneid" / "dev.json"


def sam_env_vars_beside(state_file: Path) -> Path:
    return state_file.with_name("sam-env-vars.json")


def write_whole(path: Path, content: Any) -> None:
    """``content`` as JSON at ``path``, whole at once: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    written = path.with_name(f".{path.name}.{os.getpid()}")
    written.write_text(json.dumps(content, indent=2))
    written.replace(path)


def read_state(path: Path) -> dict[str, Any]:
    """What the last ``phoneid dev`` started here wrote (``DevStack.facts``). A stack that was killed
    leaves it behind: the reader checks that its ``pid`` lives and its ``localUrl`` answers."""
    if not path.exists():
        raise FileNotFoundError("no local stack is running here: start it with `make dev` or `phoneid dev`")
    state: dict[str, Any] = json.loads(path.read_text())
    return state


def remove_if_ours(path: Path) -> None:
    """The state file and its SAM variables, when this process wrote them (a stack started since
    wrote its own); a file unreadable or not JSON is left alone."""
    try:
        if read_state(path).get("pid") == os.getpid():
            path.unlink()
            sam_env_vars_beside(path).unlink(missing_ok=True)  # it names this stack's endpoints
    except (OSError, ValueError):
        pass
