"""``phoneid connect``: Connect for a client (its profile, Enroll Key and login) and the URLs of its
batch files; the batches themselves are ``connect_batches``'s actions."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from phoneid_cli.commands import connect_batches
from phoneid_cli.errors import CommandError
from phoneid_cli.output import read_text, show, warn
from phoneid_cli.parsing import action_group, add_target
from phoneid_cli.targets import Context, where

KEY_NOTE = (
    "(the Enroll Key is shown only now; it is stored as a salted hash. "
    "Each file's header record carries it: H,<enroll key>,<verification type>)"
)


def url_lifetime(value: str) -> timedelta:
    """``--expires``: a number and a unit, ``90m``, ``24h``, ``7d`` (a bare number is seconds)."""
    text = value.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = (text[:-1], text[-1]) if text[-1:] in units else (text, "s")
    refused = argparse.ArgumentTypeError(f"{value!r} is not a duration such as 15m, 24h or 7d")
    if not (number.isascii() and number.isdigit()):  # str.isdigit() alone takes '²', which int() refuses
        raise refused
    try:  # past 4,300 digits int() raises ValueError; past a billion days timedelta, OverflowError
        return timedelta(seconds=int(number) * units[unit])
    except (ValueError, OverflowError):
        raise refused from None


def register(commands: Any) -> None:
    connect = action_group(commands, "connect", "Connect batch files: onboarding, batches")
    onboard = connect.add_parser(
        "onboard", help="provision Connect for a client: Enroll Key (shown once), types, emails, SFTP login"
    )
    onboard.add_argument("client_id")
    onboard.add_argument(
        "--name", required=True, help="client name: file-name prefix, S3 prefix and SFTP user (acme)"
    )
    onboard.add_argument(
        "--type", required=True, metavar="TYPES", help="verifiedUser, humanAssurance or both, comma-separated"
    )
    onboard.add_argument(
        "--ssh-key",
        action="append",
        metavar="FILE",
        help="SFTP stacks only (needed there): an OpenSSH public key file (e.g. ~/.ssh/id_ed25519.pub); "
        "repeat for more",
    )
    onboard.add_argument(
        "--email",
        action="append",
        metavar="ADDRESS",
        help="where batch emails go; repeat (or comma-separate)",
    )
    add_target(onboard)
    onboard.set_defaults(run=run_onboard)
    for action, helped, run in (
        ("rotate-key", "a new Enroll Key (shown once); the old one stops working", run_rotate_key),
        ("show", "the client's Connect profile (never its Enroll Key)", run_show),
        ("remove", "remove Connect for a client: profile, Enroll Key and SFTP login", run_remove),
    ):
        sub = connect.add_parser(action, help=helped)
        sub.add_argument("client_id")
        add_target(sub)
        sub.set_defaults(run=run)
    for action, helped, run in (
        ("upload-url", "s3 stacks: a URL to PUT one batch file, and URLs to GET its results", run_upload_url),
        ("download-url", "s3 stacks: URLs to GET one batch file's results", run_download_url),
    ):
        sub = connect.add_parser(action, help=helped)
        sub.add_argument("client_id")
        sub.add_argument("file", help="the batch file (its name is enough: acme_US_verifiedUser_...csv)")
        sub.add_argument(
            "--expires",
            type=url_lifetime,
            default=url_lifetime("24h"),
            metavar="DURATION",
            help="how long the URLs work: 15m, 24h (the default), 7d at most",
        )
        add_target(sub)
        sub.set_defaults(run=run)
    connect_batches.register_actions(connect)


def _onboarding(args: argparse.Namespace, context: Context, *, logins: bool = False) -> Any:
    """The stack's Connect onboarding. ``logins``: the action provisions or removes SFTP logins, which
    on a deployed SFTP stack are its Transfer Family server's users (found by the stack's outputs)."""
    from phoneid import bootstrap
    from phoneid.domain.connect import ConnectTransport

    services = context.services(args)
    sftp = services.settings.connect_transport is ConnectTransport.SFTP
    if logins and sftp and getattr(args, "stack", None):
        services = bootstrap.override(sftp_users=_sftp_users(args, context))
    return services.connect_onboarding


def _sftp_users(args: argparse.Namespace, context: Context) -> Any:
    """The deployed stack's Transfer Family users, from its outputs (server id, user role)."""
    from phoneid.adapters.transfer import TransferSftpUsers

    outputs = context.stacks.outputs(args.stack)
    needed = ("ConnectSftpServerId", "ConnectSftpUserRoleArn")
    missing = [name for name in needed if not outputs.get(name)]
    if missing:
        raise CommandError(f"stack {args.stack} has no Connect SFTP server (outputs {', '.join(missing)})")
    return TransferSftpUsers(
        context.target(args).client("transfer"),
        server_id=outputs["ConnectSftpServerId"],
        role_arn=outputs["ConnectSftpUserRoleArn"],
        bucket=connect_bucket(args, context),
    )


def connect_bucket(args: argparse.Namespace, context: Context) -> str:
    bucket = context.target(args).settings.connect_bucket
    if not bucket:
        raise CommandError("this stack has no Connect bucket (CONNECT_BUCKET is not set)")
    return bucket


def sftp_address(args: argparse.Namespace, context: Context, client_name: str) -> str:
    if getattr(args, "local", None) is not None:
        sftp = context.target(args).facts.get("sftp") or {}
        if sftp:
            return f"sftp -P {sftp['port']} {client_name}@{sftp['host']}"
    elif getattr(args, "stack", None):
        endpoint = context.stacks.outputs(args.stack).get("ConnectSftpEndpoint")
        if endpoint:
            return f"sftp {client_name}@{endpoint}"
    return f"sftp {client_name}@{{sftp_host}}"


def _profile_data(profile: Any, args: argparse.Namespace, context: Context, transport: Any) -> dict[str, Any]:
    """The profile as shown, with how the client sends files on this stack's transport."""
    from phoneid.domain.connect import ConnectTransport
    from phoneid.services.connect_onboarding import ssh_key_fingerprint

    name = profile.client_name
    data: dict[str, Any] = {
        "client_id": profile.client_id,
        "client_name": name,
        "types": sorted(profile.types),
        "emails": list(profile.emails),
        "transport": transport.value,
    }
    if transport is ConnectTransport.SFTP:
        data |= {
            # As `ssh-keygen -l` shows them: fingerprint, then the key type and its comment.
            "ssh_keys": [
                f"{ssh_key_fingerprint(key)} ({' '.join(key.split()[:1] + key.split()[2:])})"
                for key in profile.ssh_public_keys
            ],
            "upload": f"/upload  (clients/{name}/upload/ in the Connect bucket)",
            "download": f"/download  (clients/{name}/download/)",
        }
    elif transport is ConnectTransport.S3:
        options = where(args)
        data |= {
            "upload": f"clients/{name}/upload/ in the Connect bucket: a URL per file "
            f"(phoneid connect upload-url {profile.client_id} FILE{options})",
            "download": f"clients/{name}/download/: the results' URLs come with it "
            f"(or phoneid connect download-url {profile.client_id} FILE{options})",
        }
    else:
        data |= {
            "upload": f"clients/{name}/upload/ in the Connect bucket: no client transport "
            "(only files the operator puts there run)",
            "download": f"clients/{name}/download/",
        }
    data["created_at"] = profile.created_at.isoformat() if profile.created_at else None
    if transport is ConnectTransport.SFTP:
        data["sftp"] = sftp_address(args, context, name)
    return data


def _profile_lines(data: dict[str, Any]) -> list[str]:
    lines = []
    for name, value in data.items():
        if isinstance(value, list):
            lines.append(f"{name}: {', '.join(value) or '-'}")
        else:
            lines.append(f"{name}: {value if value is not None else '-'}")
    return lines


def _read_ssh_keys(files: Sequence[str]) -> list[str]:
    """Every key line of every file (an authorized_keys-like file may hold several; # comments skipped)."""
    keys: list[str] = []
    for name in files:
        text = read_text(Path(name).expanduser())
        if "PRIVATE KEY" in text:
            raise CommandError(f"{name} is a private key: give its public key ({name}.pub)")
        keys.extend(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
        if not text.strip():
            raise CommandError(f"{name}: no SSH public key in the file")
    return keys


def run_onboard(args: argparse.Namespace, context: Context) -> int:
    onboarding = _onboarding(args, context, logins=True)
    emails = [e for given in args.email or () for e in given.split(",")]
    profile, enroll_key = onboarding.onboard(
        args.client_id,
        name=args.name,
        types=args.type.split(","),
        ssh_keys=_read_ssh_keys(args.ssh_key or ()),
        emails=emails,
    )
    data = _profile_data(profile, args, context, onboarding.transport)
    data["enroll_key"] = enroll_key
    show(data, args.json, [*_profile_lines(data), KEY_NOTE])
    return 0


def run_rotate_key(args: argparse.Namespace, context: Context) -> int:
    profile, enroll_key = _onboarding(args, context).rotate_key(args.client_id)
    data = {"client_id": profile.client_id, "client_name": profile.client_name, "enroll_key": enroll_key}
    show(
        data,
        args.json,
        [*_profile_lines(data), "(files carrying the old Enroll Key are rejected from now on)", KEY_NOTE],
    )
    return 0


def run_show(args: argparse.Namespace, context: Context) -> int:
    onboarding = _onboarding(args, context)
    data = _profile_data(onboarding.show(args.client_id), args, context, onboarding.transport)
    show(
        data,
        args.json,
        [*_profile_lines(data), "enroll_key: (never shown again; rotate-key makes a new one)"],
    )
    return 0


def run_remove(args: argparse.Namespace, context: Context) -> int:
    profile = _onboarding(args, context, logins=True).remove(args.client_id)
    login = " and SFTP login" if profile.ssh_public_keys else ""
    print(
        f"{profile.client_id}: Connect removed ({profile.client_name}: profile, Enroll Key{login}); "
        "its files stay in the bucket until their retention ends"
    )
    return 0


def run_upload_url(args: argparse.Namespace, context: Context) -> int:
    return _issue_urls(args, context, upload=True)


def run_download_url(args: argparse.Namespace, context: Context) -> int:
    return _issue_urls(args, context, upload=False)


def _issue_urls(args: argparse.Namespace, context: Context, *, upload: bool) -> int:
    onboarding = _onboarding(args, context)
    issued = onboarding.batch_urls(args.client_id, Path(args.file).name, args.expires, upload=upload)
    data: dict[str, Any] = {
        "client_id": issued.profile.client_id,
        "client_name": issued.profile.client_name,
        "file_name": issued.file_name,
        "key": issued.key,
        "expires_at": issued.expires_at.isoformat(),
    }
    if issued.upload is not None:
        data["upload"] = {"method": "PUT", "url": issued.upload}
    data["results"] = {
        kind: {"file_name": name, "method": "GET", "url": url} for kind, (name, url) in issued.results.items()
    }
    lines = [f"{name}: {data[name]}" for name in ("client_name", "file_name", "key", "expires_at")]
    if issued.upload is not None:
        lines += [
            "",
            f"upload (PUT, no headers needed): {issued.upload}",
            f"  curl --fail -T {issued.file_name} '{issued.upload}'",
        ]
    lines += ["", "results (GET; 403 or 404 until the batch has written them):"]
    lines += [f"  {name}: {url}" for name, url in issued.results.values()]
    lines += [
        "",
        "(the batch is finished when its errors or its rejected file is there: the output is "
        "written before the errors file)",
    ]
    show(data, args.json, lines)
    if context.target(args).signs_with_session_credentials:
        warn(
            "phoneid: note: signed with temporary credentials (a role or SSO session): the URLs stop "
            "working when that session ends, even before expires_at"
        )
    return 0
