"""``phoneid clients``: API clients, their fraud policy and their webhook."""

from __future__ import annotations

import argparse
from typing import Any

from phoneid_cli.commands.policy import read_policy
from phoneid_cli.output import show
from phoneid_cli.parsing import action_group, add_target
from phoneid_cli.targets import Context

FLAGS = ["phone-number-change", "key-persistence", "auto-enrollment", "po-box-addresses"]
# What a client gets unless told otherwise: --flag adds to these, --no-flag takes one away.
DEFAULT_FLAGS = ["auto-enrollment"]


def register(commands: Any) -> None:
    clients = action_group(commands, "clients", "API clients")
    create = clients.add_parser("create", help="create a client; prints its secret once")
    create.add_argument(
        "--solution",
        choices=["identity", "verified-user"],
        default="identity",
        help="which Sandbox test users the client may use (another solution's answer 8009): identity "
        "(the staged and unified flows' users) or verified-user (verify's and Connect's); default: identity",
    )
    create.add_argument(
        "--name", default="", help="a label for people: shown by 'clients list', never checked"
    )
    create.add_argument("--countries", default="*", help="'*' (the whole region) or ISO codes, e.g. US,CA")
    create.add_argument(
        "--flag",
        action="append",
        default=[],
        choices=FLAGS,
        help="an operator flag to switch on besides the defaults (repeat); default flags: "
        + ", ".join(DEFAULT_FLAGS),
    )
    create.add_argument(
        "--no-flag",
        action="append",
        default=[],
        choices=FLAGS,
        metavar="FLAG",
        help="a default flag to leave off (repeat), e.g. --no-flag auto-enrollment",
    )
    add_target(create)
    create.set_defaults(run=run_create)
    listing = clients.add_parser("list", help="list clients (never their secrets)")
    add_target(listing)
    listing.set_defaults(run=run_list)
    for action in ("disable", "enable"):
        toggle = clients.add_parser(action, help=f"{action} a client")
        toggle.add_argument("client_id")
        add_target(toggle)
        toggle.set_defaults(run=run_enable)

    update = clients.add_parser("update", help="change a client's fraud policy or webhook (one at a time)")
    update.add_argument("client_id")
    chosen = update.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--policy", help="a policy file (YAML or JSON, the shape of `phoneid policy show`)")
    chosen.add_argument("--default-policy", action="store_true", help="back to the stack's default policy")
    chosen.add_argument(
        "--webhook",
        metavar="URL",
        help="where change events are POSTed (https; http for loopback); prints a new signing secret once",
    )
    chosen.add_argument("--no-webhook", action="store_true", help="stop change-event deliveries")
    add_target(update)
    update.set_defaults(run=run_update)


def chosen_flags(added: list[str], removed: list[str]) -> list[str]:
    from phoneid.services.clients import InvalidClientSpec

    both = sorted(set(added) & set(removed))
    if both:
        raise InvalidClientSpec(f"--flag and --no-flag both name {', '.join(both)}: keep one of them")
    return [flag for flag in FLAGS if (flag in DEFAULT_FLAGS or flag in added) and flag not in removed]


def run_create(args: argparse.Namespace, context: Context) -> int:
    from phoneid.domain.clients import Flag, Solution

    created = context.services(args).client_admin.create(
        solution=Solution(args.solution),
        name=args.name,
        countries=args.countries.split(","),
        flags=[Flag(f) for f in chosen_flags(args.flag, args.no_flag)],
    )
    client = created.client
    data = {
        "client_id": client.client_id,
        "client_secret": created.client_secret,
        "tier": client.tier,
        "region": client.region,
        "solution": client.solution.value,
        "countries": sorted(client.allowed_countries),
        "flags": sorted(f.value for f in client.flags),
    }
    show(
        data,
        args.json,
        [f"{k}: {v if isinstance(v, str) else ','.join(v)}" for k, v in data.items()]
        + ["(the secret is shown only now; it is stored as a salted hash)"],
    )
    return 0


def run_list(args: argparse.Namespace, context: Context) -> int:
    clients = context.services(args).client_admin.list()
    data: list[dict[str, Any]] = [
        {
            "client_id": c.client_id,
            "name": c.name,
            "tier": c.tier,
            "region": c.region,
            "solution": c.solution.value,
            "countries": sorted(c.allowed_countries),
            "flags": sorted(f.value for f in c.flags),
            "enabled": c.enabled,
            "created_at": c.created_at.isoformat(),
            "webhook": c.webhook.url if c.webhook else None,  # never its secret
        }
        for c in clients
    ]
    lines = [
        f"{c['client_id']}  {c['tier']}/{c['region']}  {c['solution']}  countries={','.join(c['countries'])}"
        f"  flags={','.join(c['flags']) or '-'}  {c['name']}"
        + (f"  webhook={c['webhook']}" if c["webhook"] else "")
        for c in data
    ]
    show(data, args.json, lines or ["no clients"])
    return 0


def run_enable(args: argparse.Namespace, context: Context) -> int:
    client = context.services(args).client_admin.set_enabled(args.client_id, args.action == "enable")
    print(f"{client.client_id}: {'enabled' if client.enabled else 'disabled'}")
    return 0


def run_update(args: argparse.Namespace, context: Context) -> int:
    policy = read_policy(args.policy) if args.policy else None  # a bad file before any stack
    admin = context.services(args).client_admin
    if args.webhook is not None or args.no_webhook:
        return _update_webhook(args, admin)
    client = admin.update(args.client_id, policy=policy, default_policy=args.default_policy)
    version = client.policy.get("version") if client.policy else None
    print(f"{client.client_id}: policy {'version ' + str(version) if version else 'default'}")
    return 0


def _update_webhook(args: argparse.Namespace, admin: Any) -> int:
    """Register a webhook (a new secret, printed once) or remove it."""
    if args.no_webhook:
        client = admin.remove_webhook(args.client_id)
        show(
            {"client_id": client.client_id, "webhook": None},
            args.json,
            [f"{client.client_id}: no webhook (change events are still recorded)"],
        )
        return 0
    registered = admin.set_webhook(args.client_id, args.webhook)
    webhook = registered.client.webhook
    assert webhook is not None
    data = {"client_id": args.client_id, "webhook": webhook.url, "webhook_secret": registered.secret}
    show(
        data,
        args.json,
        [f"{k}: {v}" for k, v in data.items()]
        + ["(the secret is shown only now; verify PhoneID-Signature with it: docs/webhooks.md)"],
    )
    return 0
