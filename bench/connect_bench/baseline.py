"""``--baseline REV``: the same bench on the service's package as it was at an earlier revision."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def checkout(revision: str) -> Iterator[Path]:
    """A temporary worktree of this repository at ``revision``, removed afterwards (the benches'
    ``--baseline``)."""
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="phoneid-bench-baseline-") as directory:
        tree = Path(directory) / "tree"
        git = ["git", "-C", str(root), "worktree"]
        subprocess.run([*git, "add", "--detach", str(tree), revision], check=True, capture_output=True)  # noqa: S603
        try:
            yield tree
        finally:
            subprocess.run([*git, "remove", "--force", str(tree)], check=False, capture_output=True)  # noqa: S603


def code_of(tree: Path | None) -> dict[str, str]:
    """The environment that puts ``tree``'s domain package first on the local stack's path (its
    workers and the CLI inherit it); nothing for this checkout."""
    return {"PYTHONPATH": str(tree / "layers" / "core")} if tree else {}
