"""Where the examples find the stack and the credentials: PHONEID_BASE_URL, PHONEID_CLIENT_ID and
PHONEID_CLIENT_SECRET (the banner of `make dev` prints them), else B, ID and SECRET (its `export`
line)."""

from __future__ import annotations

import os
import sys

from phoneid_client import PhoneIdClient


def setting(name: str, short: str) -> str:
    value = os.environ.get(name) or os.environ.get(short)
    if not value:
        sys.exit(f"set {name} (or {short}): `make dev` prints it")
    return value


def client_from_environment() -> PhoneIdClient:
    return PhoneIdClient(
        setting("PHONEID_BASE_URL", "B"),
        setting("PHONEID_CLIENT_ID", "ID"),
        setting("PHONEID_CLIENT_SECRET", "SECRET"),
    )
