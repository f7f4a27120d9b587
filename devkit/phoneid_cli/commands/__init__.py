"""One module per command group, each with ``register(commands)`` adding its parser and actions.

A handler takes the parsed arguments and the command's ``Context`` (``phoneid_cli.targets``) and
returns the exit code. ``MODULES`` is the order ``phoneid --help`` lists them in.
"""

from __future__ import annotations

from phoneid_cli.commands import (
    clients,
    connect,
    dev,
    identities,
    policy,
    sandbox,
    signals,
    token_keys,
    webhooks,
)

MODULES = (dev, clients, policy, identities, signals, webhooks, token_keys, connect, sandbox)
