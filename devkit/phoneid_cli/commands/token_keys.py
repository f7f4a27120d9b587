"""``phoneid token-keys``: the keys that sign tokens."""

from __future__ import annotations

import argparse
from typing import Any

from phoneid_cli.output import show
from phoneid_cli.parsing import action_group, add_target
from phoneid_cli.targets import Context


def register(commands: Any) -> None:
    token_keys = action_group(commands, "token-keys", "the keys that sign tokens")
    published = token_keys.add_parser("list", help="the published keys (the JWKS) and when each signs")
    add_target(published)
    published.set_defaults(run=run_list)
    replace = token_keys.add_parser(
        "replace", help="new keys for today and tomorrow in place of theirs (a suspected key exposure)"
    )
    add_target(replace)
    replace.set_defaults(run=run_replace)


def _key_data(key: Any) -> dict[str, str]:
    return {"kid": key.kid, "not_before": key.not_before.isoformat(), "not_after": key.not_after.isoformat()}


def _key_line(key: dict[str, str]) -> str:
    return f"{key['kid']}  signs {key['not_before']} to {key['not_after']}"


def run_list(args: argparse.Namespace, context: Context) -> int:
    data = [_key_data(key) for key in context.services(args).verification_keys.published()]
    show(data, args.json, [_key_line(k) for k in data])
    return 0


def run_replace(args: argparse.Namespace, context: Context) -> int:
    data = [_key_data(key) for key in context.services(args).token_key_rotation.replace()]
    show(
        data,
        args.json,
        [_key_line(k) for k in data]
        + ["(tokens of the replaced keys stop verifying within 5 minutes; clients ask /token again)"],
    )
    return 0
