"""The ``phoneid`` command: the local stack, and operator tasks against a local or deployed stack.

  phoneid dev                          start the local stack (what `make dev` runs)
  phoneid clients create|list          manage API clients (credentials)
  phoneid identities import FILE       load the production identity table
  phoneid signals import KIND FILE     load one of the operator's signal lists (signals kinds: shapes)
  phoneid sandbox users                list the Sandbox test users
  phoneid policy show|check            the fraud policy: print it, validate a client's own
  phoneid clients update ID --policy F give a client its own fraud policy
  phoneid clients update ID --webhook U register a client's change-event webhook (prints its secret)
  phoneid webhooks failed|redrive      change events whose deliveries failed: list, send again

Operator commands act on the stack named by --stack (a deployed CloudFormation stack), on the
running local stack with --local, or else on the environment's settings (PHONEID_TIER, tables, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _target(args: argparse.Namespace) -> None:
    """Point boto3 and the settings at the chosen stack before the container is built."""
    from phoneid import bootstrap

    if getattr(args, "local", False):
        from phoneid.dev.emulation import FAKE_CREDENTIALS
        from phoneid.dev.server import read_state

        state = read_state()
        for name, value in FAKE_CREDENTIALS.items():
            os.environ.setdefault(name, value)
        os.environ["AWS_ENDPOINT_URL"] = state["awsEndpointUrl"]
        os.environ.update(state["environment"])
    elif getattr(args, "stack", None):
        os.environ.update(_deployed_environment(args.stack))
    bootstrap.reset()


def _deployed_environment(stack_name: str) -> dict[str, str]:
    """The functions' environment of a deployed stack, resolved from its parameters and resources."""
    import boto3

    from phoneid.dev.stack import LocalStack

    cloudformation = boto3.client("cloudformation")
    described = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in described.get("Parameters", [])}
    resolver = LocalStack(parameters=parameters, name=stack_name)
    for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack_name):
        for resource in page["StackResourceSummaries"]:
            resolver.physical_ids[resource["LogicalResourceId"]] = resource["PhysicalResourceId"]
    # Every function's variables (the settings need all of them), as CloudFormation resolved them.
    environment: dict[str, str] = {}
    for function in resolver.template.functions.values():
        for name, value in function.environment.items():
            environment[name] = resolver.resolve(value)
    return environment


def _print(data: Any, as_json: bool, lines: Sequence[str]) -> None:
    print(json.dumps(data, indent=2) if as_json else "\n".join(lines))


# --- commands ---------------------------------------------------------------------------------


def _dev(args: argparse.Namespace) -> int:
    from phoneid.dev.server import serve

    serve(host=args.host, port=args.port, tier=args.tier, region=args.region)
    return 0


def _clients_create(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container
    from phoneid.domain.clients import Flag, Solution
    from phoneid.services.clients import InvalidClientSpec

    _target(args)
    try:
        created = container().client_admin.create(
            solution=Solution(args.solution),
            name=args.name,
            countries=args.countries.split(","),
            flags=[Flag(f) for f in args.flag] if args.flag is not None else [Flag.AUTO_ENROLLMENT],
        )
    except InvalidClientSpec as error:
        print(f"phoneid: {error}", file=sys.stderr)
        return 2
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
    _print(
        data,
        args.json,
        [f"{k}: {v if isinstance(v, str) else ','.join(v)}" for k, v in data.items()]
        + ["(the secret is shown only now; it is stored as a salted hash)"],
    )
    return 0


def _clients_list(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    _target(args)
    clients = container().client_admin.list()
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
    _print(data, args.json, lines or ["no clients"])
    return 0


def _clients_enable(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container
    from phoneid.services.clients import InvalidClientSpec

    _target(args)
    try:
        client = container().client_admin.set_enabled(args.client_id, args.action == "enable")
    except InvalidClientSpec as error:
        print(f"phoneid: {error}", file=sys.stderr)
        return 2
    print(f"{client.client_id}: {'enabled' if client.enabled else 'disabled'}")
    return 0


def _read_policy(path: str) -> dict[str, Any]:
    """A policy document from a YAML or JSON file, validated; ``InvalidPolicy`` names the bad entry."""
    import yaml

    from phoneid.domain.policy import InvalidPolicy, parse_policy

    try:
        document = yaml.safe_load(Path(path).read_text("utf-8"))
    except yaml.YAMLError as error:
        raise InvalidPolicy(f"{path} is not YAML or JSON: {error}") from None
    parse_policy(document)
    data: dict[str, Any] = document
    return data


def _clients_update(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container
    from phoneid.domain.policy import InvalidPolicy
    from phoneid.services.clients import InvalidClientSpec

    _target(args)
    if args.webhook is not None or args.no_webhook:
        return _clients_webhook(args)
    try:
        policy = _read_policy(args.policy) if args.policy else None
        client = container().client_admin.update(
            args.client_id, policy=policy, default_policy=args.default_policy
        )
    except (InvalidPolicy, InvalidClientSpec, OSError) as error:
        print(f"phoneid: {error}", file=sys.stderr)
        return 2
    version = client.policy.get("version") if client.policy else None
    print(f"{client.client_id}: policy {'version ' + str(version) if version else 'default'}")
    return 0


def _clients_webhook(args: argparse.Namespace) -> int:
    """Register a webhook (a new secret, printed once) or remove it."""
    from phoneid.bootstrap import container
    from phoneid.services.clients import InvalidClientSpec

    admin = container().client_admin
    try:
        if args.no_webhook:
            client = admin.remove_webhook(args.client_id)
            _print(
                {"client_id": client.client_id, "webhook": None},
                args.json,
                [f"{client.client_id}: no webhook (change events are still recorded)"],
            )
            return 0
        registered = admin.set_webhook(args.client_id, args.webhook)
    except InvalidClientSpec as error:
        print(f"phoneid: {error}", file=sys.stderr)
        return 2
    webhook = registered.client.webhook
    assert webhook is not None
    data = {"client_id": args.client_id, "webhook": webhook.url, "webhook_secret": registered.secret}
    _print(
        data,
        args.json,
        [f"{k}: {v}" for k, v in data.items()]
        + ["(the secret is shown only now; verify PhoneID-Signature with it: docs/webhooks.md)"],
    )
    return 0


def _webhook_queues(args: argparse.Namespace) -> tuple[Any, str, str]:
    """SQS, the webhook queue and its dead-letter queue (the one the queue's redrive policy names)."""
    from phoneid.bootstrap import container

    _target(args)
    services = container()
    queue = services.settings.webhook_queue_url
    if not queue:
        raise ValueError("no webhook queue here: name the stack with --local or --stack")
    sqs = services.sqs
    attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["RedrivePolicy"])["Attributes"]
    target = json.loads(attributes["RedrivePolicy"])["deadLetterTargetArn"]
    account, name = target.split(":")[4], target.split(":")[5]
    dead = sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
    return sqs, queue, dead


def _dead_letters(sqs: Any, queue: str, hold_seconds: int) -> list[dict[str, Any]]:
    """Every message of ``queue``, each received once and hidden for ``hold_seconds`` meanwhile."""
    messages: dict[str, dict[str, Any]] = {}
    while True:
        batch = sqs.receive_message(
            QueueUrl=queue,
            MaxNumberOfMessages=10,
            VisibilityTimeout=hold_seconds,
            WaitTimeSeconds=0,
            MessageSystemAttributeNames=["All"],
        ).get("Messages", [])
        if not batch:
            return list(messages.values())
        messages.update({message["MessageId"]: message for message in batch})


def _webhooks_failed(args: argparse.Namespace) -> int:
    """The dead-letter queue's events, left in place (each listing counts as one receive)."""
    from datetime import UTC, datetime

    from phoneid.domain.phone import mask
    from phoneid.domain.webhooks import MalformedMessage, from_message

    try:
        sqs, _, dead = _webhook_queues(args)
    except (ValueError, FileNotFoundError) as error:
        print(f"phoneid: {error}", file=sys.stderr)
        return 2
    messages = _dead_letters(sqs, dead, hold_seconds=30)
    for message in messages:  # visible again at once: listing removes nothing
        sqs.change_message_visibility(
            QueueUrl=dead, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
    data: list[dict[str, Any]] = []
    for message in messages:
        attributes = message.get("Attributes", {})
        sent = int(attributes.get("SentTimestamp", 0)) / 1000
        row: dict[str, Any] = {
            "messageId": message["MessageId"],
            "receives": int(attributes.get("ApproximateReceiveCount", 0)),
            "queuedAt": datetime.fromtimestamp(sent, UTC).isoformat(timespec="seconds"),
        }
        try:
            event = from_message(message["Body"])
        except MalformedMessage:
            row |= {"eventId": None, "eventType": None, "phoneNumber": None, "clientId": None}
        else:
            row |= {
                "eventId": event.event_id,
                "eventType": event.kind.value,
                "phoneNumber": mask(event.phone_number),
                "clientId": event.client_id,
            }
        data.append(row)
    lines = [
        f"{r['eventId'] or '(malformed) ' + r['messageId']}  {r['eventType'] or '-'}"
        f"  {r['phoneNumber'] or '-'}  client={r['clientId'] or '-'}  receives={r['receives']}"
        f"  queued {r['queuedAt']}"
        for r in data
    ]
    _print(data, args.json, lines or ["no failed change events"])
    return 0


def _webhooks_redrive(args: argparse.Namespace) -> int:
    """Every dead-lettered event back to the webhook queue, with its event id unchanged."""
    try:
        sqs, queue, dead = _webhook_queues(args)
    except (ValueError, FileNotFoundError) as error:
        print(f"phoneid: {error}", file=sys.stderr)
        return 2
    moved = 0
    for message in _dead_letters(sqs, dead, hold_seconds=120):
        sqs.send_message(QueueUrl=queue, MessageBody=message["Body"])
        sqs.delete_message(QueueUrl=dead, ReceiptHandle=message["ReceiptHandle"])
        moved += 1
    _print({"redriven": moved}, args.json, [f"{moved} change event(s) sent back to the webhook queue"])
    return 0


def policy_markdown() -> str:
    """The default policy as the tables of docs/fraud-policy.md."""
    from phoneid.domain.evaluation import default_policy
    from phoneid.domain.policy import SIGNAL_SOURCES
    from phoneid.domain.reasons import describe

    policy = default_policy()
    rows = [
        "| Code | Category | Meaning | Raised when | Source | Source down | Flows |",
        "|---|---|---|---|---|---|---|",
    ]
    for rule in policy.rules:
        sources = sorted({SIGNAL_SOURCES[c.signal] for c in rule.when})
        down = "fails (fail closed)" if rule.onSourceFailure.value == "fail" else "not raised (skipped)"
        flows = ", ".join(rule.flows) if len(rule.flows) < 3 else "all"
        action = "" if rule.action.value == "fail" else f" ({rule.action.value} only)"
        rows.append(
            f"| {rule.code} | {rule.category.value} | {describe(rule.code)}{action} "
            f"| {' and '.join(c.describe() for c in rule.when)} | {'; '.join(sources)} | {down} | {flows} |"
        )
    levels = ["", "| Level | Reason | Given when |", "|---|---|---|"]
    for level in policy.assurance:
        for name, reason in level.reasons.items():
            facts = [
                f"`{k}` {'>= ' if k == 'confirmedElements' else '= '}{str(v).lower()}"
                for k, v in reason.model_dump(exclude_none=True).items()
                if k != "codes"
            ]
            when = (
                "any of " + ", ".join(str(c) for c in reason.codes) + " raised"
                if reason.codes
                else (" and ".join(facts) or "always")
            )
            levels.append(f"| {level.level} | {name} | {when} |")
    return "\n".join(rows + levels) + "\n"


def _policy_show(args: argparse.Namespace) -> int:
    if args.markdown:
        sys.stdout.write(policy_markdown())
        return 0
    from importlib import resources

    sys.stdout.write(resources.files("phoneid").joinpath("policy/default.yaml").read_text("utf-8"))
    return 0


def _policy_check(args: argparse.Namespace) -> int:
    from phoneid.domain.policy import InvalidPolicy

    try:
        document = _read_policy(args.file)
    except (InvalidPolicy, OSError) as error:
        print(f"phoneid: {error}", file=sys.stderr)
        return 2
    print(f"{args.file}: a valid policy (version {document['version']}, {len(document['rules'])} rules)")
    return 0


def _identities_import(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container

    _target(args)
    path = Path(args.file)
    fmt = args.format or ("csv" if path.suffix.lower() == ".csv" else "jsonl")
    report = container().identity_import.run(path.read_text("utf-8"), fmt, skip_invalid=args.skip_invalid)
    for line, reason in report.rejected:
        print(f"{path}:{line}: rejected: {reason}", file=sys.stderr)
    print(f"imported {report.imported} identities, rejected {len(report.rejected)}")
    return 1 if report.rejected and not args.skip_invalid else 0


def _signals_import(args: argparse.Namespace) -> int:
    from phoneid.bootstrap import container
    from phoneid.domain.signals import ListKind

    _target(args)
    path = Path(args.file)
    fmt = args.format or ("csv" if path.suffix.lower() == ".csv" else "jsonl")
    try:
        report = container().signal_list_import.run(
            ListKind(args.kind), path.read_text("utf-8"), fmt, skip_invalid=args.skip_invalid
        )
    except ValueError as error:  # a CSV header that does not fit the kind
        print(f"phoneid: {path}: {error}", file=sys.stderr)
        return 2
    for line, reason in report.rejected:
        print(f"{path}:{line}: rejected: {reason}", file=sys.stderr)
    print(
        f"imported {report.imported} {args.kind} records ({report.entries} entries), "
        f"rejected {len(report.rejected)}"
    )
    return 1 if report.rejected and not args.skip_invalid else 0


def _signals_kinds(args: argparse.Namespace) -> int:
    from phoneid.domain.signals import ListKind
    from phoneid.services.signal_lists import as_mapping, describe, field_summary, record_fields

    lines = [f"{k.value:<24} {field_summary(record_fields(k))}\n{'':<24} {describe(k)}" for k in ListKind]
    _print([as_mapping(k) for k in ListKind], args.json, lines)
    return 0


def sandbox_markdown() -> str:
    """The Sandbox users as the Markdown table of docs/sandbox.md."""
    from phoneid.domain.sandbox import Catalogue

    rows = [
        "| Scenario | Region | Phone number | Name | Date of birth | SSN | Solution | Behaviour |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for u in Catalogue.load():
        rows.append(
            f"| `{u.scenario.value}` | {u.region} | `{u.phone_number}` | {u.identity.first_name} "
            f"{u.identity.last_name} | {u.identity.dob} | {u.identity.ssn} | {u.solution_name} "
            f"| {u.description} |"
        )
    return "\n".join(rows) + "\n"


def _sandbox_users(args: argparse.Namespace) -> int:
    from phoneid.domain.sandbox import Catalogue

    if args.markdown:
        sys.stdout.write(sandbox_markdown())
        return 0
    users = list(Catalogue.load(args.region))
    data = [
        {
            "scenario": u.scenario.value,
            "region": u.region,
            "solution": u.solution_name,
            "phoneNumber": u.phone_number,
            "firstName": u.identity.first_name,
            "lastName": u.identity.last_name,
            "dob": u.identity.dob,
            "ssn": u.identity.ssn,
            "description": u.description,
        }
        for u in users
    ]
    lines = [
        f"{u['scenario']:<26} {u['region']}  {u['phoneNumber']:<14}  "
        f"{u['firstName'] + ' ' + u['lastName']:<24}  dob {u['dob']}  ssn {u['ssn']}  {u['solution']:<13}  "
        f"{u['description']}"
        for u in data
    ]
    _print(data, args.json, lines)
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="phoneid", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = root.add_subparsers(dest="command", required=True)

    dev = commands.add_parser("dev", help="start the local stack")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    dev.add_argument(
        "--tier", choices=["sandbox", "production"], default=os.environ.get("PHONEID_TIER", "sandbox")
    )
    dev.add_argument("--region", choices=["US", "EU"], default=os.environ.get("PHONEID_REGION", "US"))
    dev.set_defaults(run=_dev)

    def targeted(sub: argparse.ArgumentParser) -> None:
        where = sub.add_mutually_exclusive_group()
        where.add_argument("--local", action="store_true", help="the running local stack (make dev)")
        where.add_argument("--stack", help="a deployed CloudFormation stack name")
        sub.add_argument("--json", action="store_true", help="print JSON")

    clients = commands.add_parser("clients", help="API clients").add_subparsers(dest="action", required=True)
    create = clients.add_parser("create", help="create a client; prints its secret once")
    create.add_argument("--solution", choices=["identity", "verified-user"], default="identity")
    create.add_argument("--name", default="")
    create.add_argument("--countries", default="*", help="'*' (the whole region) or ISO codes, e.g. US,CA")
    create.add_argument(
        "--flag",
        action="append",
        choices=["phone-number-change", "key-persistence", "auto-enrollment", "po-box-addresses"],
        help="operator flag to switch on (repeat); default: auto-enrollment only",
    )
    targeted(create)
    create.set_defaults(run=_clients_create)
    listing = clients.add_parser("list", help="list clients (never their secrets)")
    targeted(listing)
    listing.set_defaults(run=_clients_list)
    for action in ("disable", "enable"):
        toggle = clients.add_parser(action, help=f"{action} a client")
        toggle.add_argument("client_id")
        targeted(toggle)
        toggle.set_defaults(run=_clients_enable)

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
    targeted(update)
    update.set_defaults(run=_clients_update)

    policy = commands.add_parser("policy", help="the fraud policy").add_subparsers(
        dest="action", required=True
    )
    show = policy.add_parser("show", help="print the default policy (YAML), or its tables (--markdown)")
    show.add_argument("--markdown", action="store_true", help="the tables of docs/fraud-policy.md")
    show.set_defaults(run=_policy_show)
    check = policy.add_parser("check", help="validate a policy file; errors name the bad entry")
    check.add_argument("file")
    check.set_defaults(run=_policy_check)

    identities = commands.add_parser("identities", help="identity data").add_subparsers(
        dest="action", required=True
    )
    load = identities.add_parser("import", help="load identities from JSON Lines or CSV")
    load.add_argument("file")
    load.add_argument("--format", choices=["jsonl", "csv"])
    load.add_argument(
        "--skip-invalid", action="store_true", help="import the valid records even if some are not"
    )
    targeted(load)
    load.set_defaults(run=_identities_import)

    from phoneid.domain.signals import ListKind

    signals = commands.add_parser("signals", help="the operator's signal lists").add_subparsers(
        dest="action", required=True
    )
    signal_load = signals.add_parser("import", help="load one list from JSON Lines or CSV")
    signal_load.add_argument(
        "kind", choices=[k.value for k in ListKind], metavar="KIND", help=", ".join(k.value for k in ListKind)
    )
    signal_load.add_argument("file")
    signal_load.add_argument("--format", choices=["jsonl", "csv"])
    signal_load.add_argument(
        "--skip-invalid", action="store_true", help="import the valid records even if some are not"
    )
    targeted(signal_load)
    signal_load.set_defaults(run=_signals_import)
    kinds = signals.add_parser("kinds", help="each kind of list and the fields of its records")
    kinds.add_argument("--json", action="store_true")
    kinds.set_defaults(run=_signals_kinds)

    webhooks = commands.add_parser("webhooks", help="change-event webhooks").add_subparsers(
        dest="action", required=True
    )
    failed = webhooks.add_parser(
        "failed", help="list the change events whose deliveries failed (the dead-letter queue), keeping them"
    )
    targeted(failed)
    failed.set_defaults(run=_webhooks_failed)
    redrive = webhooks.add_parser("redrive", help="send the failed change events to their webhooks again")
    targeted(redrive)
    redrive.set_defaults(run=_webhooks_redrive)

    sandbox = commands.add_parser("sandbox", help="Sandbox tier").add_subparsers(dest="action", required=True)
    users = sandbox.add_parser("users", help="list the Sandbox test users")
    users.add_argument("--region", choices=["US", "EU"])
    users.add_argument("--json", action="store_true")
    users.add_argument("--markdown", action="store_true", help="the table of docs/sandbox.md")
    users.set_defaults(run=_sandbox_users)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
