"""`phoneid --help` lists every command and action the parser knows, with its help."""

from __future__ import annotations

import pytest

from phoneid_cli.main import main


def test_help_lists_every_action_of_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])

    shown = capsys.readouterr().out
    assert exited.value.code == 0
    for line in (
        "phoneid clients disable",
        "phoneid clients enable",
        "phoneid clients update",
        "phoneid connect rotate-key",
        "phoneid webhooks redrive",
        "phoneid signals kinds",
        "phoneid sandbox users",
    ):
        assert line in shown
    assert "phoneid clients enable               enable a client" in shown
