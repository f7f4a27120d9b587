"""``phoneid dev``: the local stack, and the address its links carry."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from phoneid_cli.errors import CommandError
from phoneid_cli.targets import Context

# `phoneid dev --host` values meaning every interface: addresses a phone cannot open.
EVERY_INTERFACE = ("0.0.0.0", "::", "")  # noqa: S104 - naming the wildcard, not binding to it


# What `phoneid dev -h` says of the environment it reads (README, "The local stack", has them all).
DEV_ENVIRONMENT = """environment:
  PORT                        the API's port (--port wins)
  PHONEID_TIER, PHONEID_REGION, PHONEID_CONNECT_TRANSPORT, PHONEID_DATA
                              --tier, --region, --connect-transport and --data when not given
  PHONEID_CLIENT_ID, PHONEID_CLIENT_SECRET
                              seed a client with exactly these credentials (secret: 32+ characters)
  PHONEID_DEVICE_MSISDN       production tier: the number the fake operator sees for Mobile Auth
  PHONEID_SFTP_PORT           the SFTP port of Connect's sftp transport (default 2222; 0: any)
  PHONEID_LAMBDA_PROCESSES    worker processes per function (default: the CPUs; 0: in-process)
README.md ("The local stack") lists the others."""


def register(commands: Any) -> None:
    dev = commands.add_parser(
        "dev",
        help="start the local stack",
        epilog=DEV_ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dev.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1); 0.0.0.0: every interface, so a phone on "
        "this network can open the links (it also exposes the stack and its test credentials there)",
    )
    dev.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("PORT", "3000")),
        help="the API's port (default: PORT, else 3000)",
    )
    dev.add_argument(
        "--public-url",
        type=public_url,
        metavar="URL",
        help="the base URL of links in SMS and of the WebSocket (default http://HOST:PORT; with --host "
        "0.0.0.0, this machine's LAN address)",
    )
    dev.add_argument(
        "--tier",
        choices=["sandbox", "production"],
        default=os.environ.get("PHONEID_TIER", "sandbox"),
        help="sandbox: scripted test users and codes; production: random codes, the fake carrier's Mobile "
        "Auth, identities you import (default: PHONEID_TIER, else sandbox)",
    )
    dev.add_argument(
        "--region",
        choices=["US", "EU"],
        default=os.environ.get("PHONEID_REGION", "US"),
        help="the region the stack serves: its numbers and test users (default: PHONEID_REGION, else US)",
    )
    dev.add_argument(
        "--connect-transport",
        choices=["s3", "sftp", "none"],
        default=os.environ.get("PHONEID_CONNECT_TRANSPORT") or None,
        help="how Connect clients send files, as the template's ConnectTransport (default: the "
        "template's, s3; PHONEID_CONNECT_TRANSPORT sets it too)",
    )
    dev.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        default=os.environ.get("PHONEID_DATA") or None,
        help="keep the stack's state in DIR/stack.json (0600: it holds secrets): clients, identities, "
        "Connect onboarding, webhooks and the banner's client are there again at the next start with the "
        "same DIR; saved every 10 s and at Ctrl-C (default: PHONEID_DATA, else none: every start is empty)",
    )
    dev.set_defaults(run=run_dev)


def run_dev(args: argparse.Namespace, context: Context) -> int:
    from phoneid.services.clients import InvalidClientSpec
    from phoneid_dev.server import serve
    from phoneid_dev.snapshot.directory import DataRefused

    base_url = public_base_url(args.host, args.port, args.public_url)
    if args.host in EVERY_INTERFACE:
        print(
            f"phoneid dev: listening on every interface; links use {base_url} (--public-url sets another). "
            "Anyone on this network can reach this stack and its test credentials.",
            file=sys.stderr,
        )
    if args.connect_transport not in (None, "s3", "sftp", "none"):
        raise CommandError(
            f"PHONEID_CONNECT_TRANSPORT={args.connect_transport!r}: use s3, sftp or none (or unset it)"
        )
    try:
        serve(
            host=args.host,
            port=args.port,
            tier=args.tier,
            region=args.region,
            base_url=base_url,
            connect_transport=args.connect_transport,
            data=args.data,
        )
    except DataRefused as error:
        raise CommandError(str(error)) from None
    except InvalidClientSpec as error:  # only the seeded client can be refused
        raise CommandError(
            f"PHONEID_CLIENT_SECRET: {error}: set a longer one, or unset PHONEID_CLIENT_ID and "
            "PHONEID_CLIENT_SECRET to have credentials made up"
        ) from None
    return 0


def lan_address() -> str | None:
    """This machine's address on its network, from the route to a private address: a UDP socket's
    ``connect`` only picks the route and sends nothing, so no network access is needed."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            address = str(probe.getsockname()[0])
        except OSError:  # no route: no network
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address  # noqa: S104


def public_base_url(
    host: str, port: int, public_url: str | None = None, lan: Callable[[], str | None] = lan_address
) -> str:
    """The base URL links in SMS and the WebSocket URL carry: ``--public-url`` if given, else the
    address listened on; for every interface (0.0.0.0, ::) the machine's LAN address, as a phone
    cannot open 0.0.0.0 (127.0.0.1 when there is no network)."""
    if public_url:
        return public_url.rstrip("/")
    if host in EVERY_INTERFACE:
        host = lan() or "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def public_url(value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{value!r} is not an http(s) URL, e.g. http://192.168.1.20:3000")
    return value.strip().rstrip("/")
