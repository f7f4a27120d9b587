"""No module of the service, its handlers, its tools or its benches passes about 400 lines without a reason.

A long module is usually several rooms in one; a reader finds a command, a store or a workflow step
by its file name only when each module holds one thing. The few that stay long say why here, and
each reason is dropped once its module is short again (docs/adr/0097-rooms-of-one-purpose.md).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("layers/core/phoneid", "functions", "devkit", "tools", "bench")
LIMIT = 400

# Modules allowed past the limit, each with its reason.
LONG_FOR_A_REASON = {
    "layers/core/phoneid/ports.py": (
        "the one catalogue of the service's outside dependencies, one short Protocol each (42): "
        "a reader of an adapter or a fake finds its contract beside every other's"
    ),
}


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def python_modules() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): lines(path)
        for root in CHECKED
        for path in (ROOT / root).rglob("*.py")
        if "__pycache__" not in path.parts
    }


def test_no_module_passes_the_limit_without_a_reason() -> None:
    # Given every Python module of the layer, the handlers, the local stack, the CLI, the tools, the benches
    modules = python_modules()
    assert "layers/core/phoneid/bootstrap.py" in modules  # the walk found the package
    assert "bench/connect.py" in modules  # and the benches

    # Then each past the limit has its reason
    unexplained = {
        path: count for path, count in modules.items() if count > LIMIT and path not in LONG_FOR_A_REASON
    }
    assert unexplained == {}


def test_every_reason_is_for_a_module_still_past_the_limit() -> None:
    modules = python_modules()

    stale = {path: modules.get(path, 0) for path in LONG_FOR_A_REASON if modules.get(path, 0) <= LIMIT}
    assert stale == {}
