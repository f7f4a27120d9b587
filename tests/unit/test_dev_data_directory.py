"""``phoneid dev --data DIR``'s directory: private, written whole, and refused when it holds another
format version, another stack or tables the template no longer has."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from phoneid_cli.main import parser
from phoneid_dev import server
from phoneid_dev.devstack import DevStack
from phoneid_dev.server import _save_at_stop
from phoneid_dev.snapshot import state
from phoneid_dev.snapshot.directory import FORMAT_VERSION, DataDirectory, DataRefused, StackKind
from phoneid_dev.template import template

SANDBOX_US = StackKind("sandbox", "US", "us-east-1")
KEPT = {
    "clockOffsetSeconds": 60.0,
    "ownClients": {"banner": {"client_id": "c", "client_secret": "s"}},
    "tables": {},
}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_save_makes_a_private_directory_and_file_read_back_whole(tmp_path: Path) -> None:
    # Given no directory yet
    directory = DataDirectory(tmp_path / "data")
    assert directory.load(SANDBOX_US) is None

    # When a snapshot is saved
    written = directory.save(SANDBOX_US, KEPT)

    # Then only its owner can read it, no temporary file is left, and it reads back with its version
    assert written is True
    assert _mode(tmp_path / "data") == 0o700
    assert _mode(directory.file) == 0o600
    assert [each.name for each in (tmp_path / "data").iterdir()] == ["stack.json"]
    loaded = DataDirectory(tmp_path / "data").load(SANDBOX_US)
    assert loaded == {
        "formatVersion": FORMAT_VERSION,
        "stack": {"tier": "sandbox", "region": "US", "aws_region": "us-east-1"},
        **KEPT,
    }


def test_an_unchanged_stack_is_not_written_again(tmp_path: Path) -> None:
    directory = DataDirectory(tmp_path)
    directory.save(SANDBOX_US, KEPT)
    directory.file.write_text(directory.file.read_text())  # the same content, a new write time
    before = directory.file.stat().st_mtime_ns

    assert directory.save(SANDBOX_US, KEPT) is False
    assert directory.file.stat().st_mtime_ns == before
    assert directory.save(SANDBOX_US, {**KEPT, "clockOffsetSeconds": 61.0}) is True


def test_a_file_of_another_format_version_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    DataDirectory(tmp_path).save(SANDBOX_US, KEPT)
    kept = json.loads((tmp_path / "stack.json").read_text())
    (tmp_path / "stack.json").write_text(json.dumps({**kept, "formatVersion": FORMAT_VERSION + 1}))

    with pytest.raises(DataRefused) as refused:
        DataDirectory(tmp_path).load(SANDBOX_US)

    assert str(refused.value) == (
        f"--data {tmp_path}: stack.json has format version {FORMAT_VERSION + 1}, this phoneid dev reads "
        f"version {FORMAT_VERSION}: start the version that wrote it, or use another directory"
    )


def test_a_file_that_is_not_a_snapshot_is_refused(tmp_path: Path) -> None:
    (tmp_path / "stack.json").write_text("{half")

    with pytest.raises(DataRefused, match="cannot be read"):
        DataDirectory(tmp_path).load(SANDBOX_US)


@pytest.mark.parametrize(
    "stack", [None, "sandbox", {"tier": "sandbox"}, {"tier": "sandbox", "colour": "red"}]
)
def test_a_snapshot_that_does_not_name_its_stack_is_refused(tmp_path: Path, stack: object) -> None:
    kept = {"formatVersion": FORMAT_VERSION} | ({"stack": stack} if stack is not None else {})
    (tmp_path / "stack.json").write_text(json.dumps(kept))

    with pytest.raises(DataRefused, match="does not say which stack it belongs to; move it away"):
        DataDirectory(tmp_path).load(SANDBOX_US)


@pytest.mark.parametrize(
    "other", [StackKind("production", "US", "us-east-1"), StackKind("sandbox", "EU", "us-east-1")]
)
def test_a_directory_of_another_tier_or_region_is_refused(tmp_path: Path, other: StackKind) -> None:
    DataDirectory(tmp_path).save(SANDBOX_US, KEPT)

    with pytest.raises(DataRefused) as refused:
        DataDirectory(tmp_path).load(other)

    assert str(refused.value) == (
        f"--data {tmp_path} holds a sandbox US stack (AWS region us-east-1), not {other.describe()}: "
        "start with --tier sandbox --region US, or use another directory"
    )


def test_a_snapshot_with_a_table_the_template_no_longer_has_does_not_fit() -> None:
    with pytest.raises(ValueError, match=r"it holds GoneTable, which template\.yaml no longer has"):
        state.check_fits(template(), {"tables": {"ClientsTable": [], "GoneTable": []}})
    state.check_fits(template(), {"tables": {"ClientsTable": []}, "kmsKeys": {"PiiKey": {}}})


def test_the_cli_takes_the_directory_from_the_flag_or_phoneid_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PHONEID_DATA", raising=False)
    assert parser().parse_args(["dev"]).data is None
    assert parser().parse_args(["dev", "--data", str(tmp_path)]).data == tmp_path

    monkeypatch.setenv("PHONEID_DATA", str(tmp_path / "kept"))
    assert parser().parse_args(["dev"]).data == tmp_path / "kept"


def test_a_save_that_fails_at_the_stop_is_said_and_the_stop_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def full_disk() -> bool:
        raise OSError(28, "No space left on device")

    _save_at_stop(SimpleNamespace(save_data=full_disk), tmp_path)  # type: ignore[arg-type]

    said = capsys.readouterr()
    assert (
        f"State NOT saved to {tmp_path} (OSError: [Errno 28] No space left on device)" in said.out + said.err
    )


def test_without_a_data_directory_nothing_is_read_or_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given `phoneid dev` with neither --data nor PHONEID_DATA, in a directory holding a snapshot
    monkeypatch.delenv("PHONEID_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    DataDirectory(tmp_path).save(SANDBOX_US, KEPT)
    served: dict[str, Any] = {}
    monkeypatch.setattr(server, "serve", lambda **options: served.update(options))

    # When it runs
    args = parser().parse_args(["dev"])
    args.run(args, None)

    # Then the stack is served with no data directory: it reads no snapshot and saves none
    assert served["data"] is None
    stack: Any = SimpleNamespace(data=None)
    assert DevStack._kept_snapshot(stack) is None
    assert DevStack.save_data(stack) is False
