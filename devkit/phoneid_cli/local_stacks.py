"""The local handshake: which local stack ``--local`` names, and its facts (``DevStack.facts``: its
AWS endpoint, its functions' environment, its SFTP server).

With no value, the one the state file names (the last started here); with a port or URL, the one
answering ``GET /_local/info`` there. A state file left by a stack that is gone is said and removed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from phoneid_cli.errors import START_LOCAL, CommandError


def local_url(value: str) -> str:
    """``--local``'s value: a port of this machine or the URL of a local stack."""
    text = value.strip().rstrip("/")
    # ASCII digits only, and few: int() refuses '²' (a digit to str.isdigit) and 4,300 digits or more
    if text.isascii() and text.isdigit() and len(text) <= 5 and 0 < int(text) < 65536:
        return f"http://127.0.0.1:{int(text)}"
    parts = urlsplit(text)
    if parts.scheme in ("http", "https") and parts.hostname and parts.path in ("", "/"):
        return text
    raise argparse.ArgumentTypeError(
        f"{value!r} is not a port or URL of a local stack (e.g. 3101 or http://127.0.0.1:3101); "
        "a file name goes before --local"
    )


def local_stack_facts(local: str | bool) -> dict[str, Any]:
    """The facts of the local stack ``--local`` names: ``True`` for the last started here."""
    if local is True:
        return _last_started_stack()
    url = str(local)
    facts = _ask_local_stack(url)
    if facts is None:
        port = urlsplit(url).port or "PORT"
        raise CommandError(
            f"no local stack answers at {url}: start one there (phoneid dev --port {port}) "
            "or check the address",
            exit_code=1,
        )
    return facts


def _last_started_stack() -> dict[str, Any]:
    """The stack of the state file. A stack that was killed leaves its file behind: when its
    process is gone or nothing answers at its address, the file is removed and that is said."""
    from phoneid_dev import server

    try:
        state = server.read_state()
    except FileNotFoundError:
        raise CommandError(f"no local stack is running: {START_LOCAL}", exit_code=1) from None
    except ValueError:  # not JSON: not a file a running stack wrote
        state = {}
    url = state.get("localUrl") or state.get("baseUrl")
    facts = _ask_local_stack(url) if url and _process_lives(state.get("pid")) else None
    if facts is None:
        server.STATE_FILE.unlink(missing_ok=True)
        port = str(url).rsplit(":", 1)[-1] if url else ""
        last = f"last one on port {port} stopped" if port.isdigit() else "the last one stopped"
        raise CommandError(f"no local stack is running ({last}): {START_LOCAL}", exit_code=1)
    return facts


def _process_lives(pid: object) -> bool:
    if not isinstance(pid, int) or sys.platform == "win32":
        return True  # nothing to check (an older state file): the address decides
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _ask_local_stack(url: str) -> dict[str, Any] | None:
    """``GET {url}/_local/info``: the stack's facts, or None when nothing listens there."""
    # Never through a proxy: the stack is on this machine or its network.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/_local/info", timeout=15) as answer:
            facts = json.loads(answer.read())
    except urllib.error.HTTPError as error:
        raise CommandError(
            f"{url} is not a PhoneID local stack (GET /_local/info answered {error.code}): check the port",
            exit_code=1,
        ) from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, ConnectionRefusedError):
            return None
        raise CommandError(
            f"cannot reach a local stack at {url} ({error.reason}): check the address", exit_code=1
        ) from None
    except ConnectionRefusedError:
        return None
    except (OSError, ValueError) as error:  # reset, timed out, not JSON
        raise CommandError(
            f"the local stack at {url} did not answer ({error}): check it is running", exit_code=1
        ) from None
    needed = ("awsEndpointUrl", "environment")
    if not isinstance(facts, dict) or any(name not in facts for name in needed):
        raise CommandError(
            f"{url} does not say its settings (GET /_local/info lacks {', '.join(needed)}): "
            "restart it with this version (make dev)",
            exit_code=1,
        )
    return facts
