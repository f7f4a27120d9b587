"""The README's lines that reach the local AWS (moto) work as written, from a clean environment."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import boto3

from phoneid_dev.emulation import FAKE_CREDENTIALS, MotoServer

ROOT = Path(__file__).resolve().parents[2]


def readme_commands(marker: str) -> list[str]:
    """Each README shell command (continuation lines joined) that contains ``marker``."""
    text = (ROOT / "README.md").read_text().replace("\\\n", " ")
    return [
        line.strip() for line in text.splitlines() if marker in line and not line.lstrip().startswith("#")
    ]


def test_the_readme_lists_the_local_tables_without_the_aws_cli() -> None:
    # Given a moto server with a table, and a shell without AWS settings
    server = MotoServer().start()
    try:
        boto3.client("dynamodb", endpoint_url=server.endpoint_url, **_keys()).create_table(
            TableName="readme-check",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        [command] = readme_commands("list_tables")
        command = command.replace("http://127.0.0.1:<moto port>", server.endpoint_url)
        command = command.replace(".venv/bin/python", sys.executable)
        environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        words = shlex.split(command)
        setting = re.compile(r"^([A-Z_]+)=(.*)$")
        assignments = dict(m.groups() for m in map(setting.match, words) if m)
        program = [w for w in words if not setting.match(w)]

        # When the README's line runs
        done = subprocess.run(  # noqa: S603 - the README's own line
            program, env={**environment, **assignments}, capture_output=True, text=True
        )

        # Then it prints the table
        assert done.returncode == 0, done.stderr
        assert "readme-check" in done.stdout
    finally:
        server.stop()


def _keys() -> dict[str, str]:
    return {
        "region_name": FAKE_CREDENTIALS["AWS_DEFAULT_REGION"],
        "aws_access_key_id": FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    }
